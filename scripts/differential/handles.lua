-- Thread handles: what spawn returns, its name, tostring, is_alive, cancel,
-- fields a program stores on it; run's own values.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local named = cosock.spawn(function() cosock.socket.sleep(0) end, "named")
local unnamed = cosock.spawn(function() cosock.socket.sleep(0) end)
local numbered = cosock.spawn(function() end, 42)
local tabled = cosock.spawn(function() end, setmetatable({}, { __tostring = function() return "custom" end }))

R.show("type(handle)", type(named))
R.show("handle.name", named.name)
R.show("unnamed.name", unnamed.name)
R.show("numbered.name", numbered.name)
R.show("tostring(named)", tostring(named))
R.show("tostring(numbered)", tostring(numbered))
R.show("tostring(tabled)", tostring(tabled))
R.show("tostring(unnamed) is a thread", (tostring(unnamed):match("^thread: ") ~= nil))
R.show("is_alive before run", named:is_alive())
R.call("store a field", function() named.mine = 5; return named.mine end)
R.call("rename", function() named.name = "renamed"; return named.name, tostring(named) end)
R.show("handles differ", named ~= unnamed)
R.show("getmetatable(handle) is a table", type(getmetatable(named)))

-- cancel before the task ever ran
local never = cosock.spawn(function() print("never printed") end, "never")
R.call("cancel (not started)", never.cancel, never)
R.show("is_alive after cancel", never:is_alive())
R.call("cancel again", never.cancel, never)
R.show("tostring after cancel", tostring(never))

-- cancel from inside itself, and of another parked task
local parked
parked = cosock.spawn(function() cosock.socket.sleep(100) end, "parked")
cosock.spawn(function()
  cosock.socket.sleep(0)
  R.show("parked alive", parked:is_alive())
  R.call("cancel parked", parked.cancel, parked)
  R.show("parked alive after cancel", parked:is_alive())
end, "canceller")

R.run("run")
local me
me = cosock.spawn(function()
  R.call("cancel self", function() return me:cancel() end)
end, "selfish")
R.run("run selfish")
R.show("is_alive after run", named:is_alive())
R.call("cancel a finished task", named.cancel, named)
collectgarbage(); collectgarbage()
R.show("tostring(unnamed) after run+gc", tostring(unnamed))
R.show("run with nothing to do", cosock.run())

R.call("reset", cosock.reset)
R.call("spawn(nil)", cosock.spawn, nil)
R.call("spawn(42)", cosock.spawn, 42, "x")
