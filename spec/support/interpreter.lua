-- spec/support/interpreter.lua: the command that runs the Lua the specs run
-- on, for specs that start a child Lua process. make check exports LUA (the
-- interpreter configure picked); without it, lua<major.minor> of this one.

return os.getenv("LUA") or ("lua" .. _VERSION:match("%d+%.%d+"))
