-- spec/support/child.lua: runs a Lua program in a child process of the Lua
-- the specs run on, with their package paths, and returns everything it
-- printed (stdout and stderr). For what only a fresh process shows: the stall
-- dump (printed with the print cosock captured at load), fd limits.
--   child.run(source [, shell_prefix]) -> output
--   source: Lua code; it starts with package.path/cpath already set.
--   shell_prefix: put before the command (e.g. "ulimit -n 64 && ").

local M = {}

-- Under ASan, LeakSanitizer's own tracer now and then dies on a loaded
-- machine ("Tracer caught signal 11", then "LeakSanitizer has encountered a
-- fatal error"): no finding about the program, whose exit status it takes.
-- Such a run goes again, up to four times; should the tracer die every time
-- the program runs once more without the leak check (everything else still
-- checked), and says so on stderr.
local TRACER_DIED = "LeakSanitizer has encountered a fatal error"

-- Runs a shell command; returns what it printed.
function M.command(cmd)
  local out
  for _ = 1, 4 do
    local p = assert(io.popen(cmd))
    out = p:read("*a")
    p:close()
    if not out:find(TRACER_DIED, 1, true) then return out end
  end
  io.stderr:write("spec/support/child.lua: LeakSanitizer's tracer died four times; once more without the leak check: ", cmd, "\n")
  local p = assert(io.popen("ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\"; export ASAN_OPTIONS; " .. cmd))
  out = p:read("*a")
  p:close()
  return out
end

function M.run(source, shell_prefix)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath), source)
  f:close()
  local lua = require "spec.support.interpreter"
  local out = M.command((shell_prefix or "") .. lua .. " " .. script .. " 2>&1")
  os.remove(script)
  return out
end

return M
