-- spec/support/child.lua: runs a Lua program in a child process of the Lua
-- the specs run on, with their package paths, and returns everything it
-- printed (stdout and stderr). For what only a fresh process shows: the stall
-- dump (printed with the print cosock captured at load), fd limits.
--   child.run(source [, shell_prefix]) -> output
--   source: Lua code; it starts with package.path/cpath already set.
--   shell_prefix: put before the command (e.g. "ulimit -n 64 && ").

local M = {}

function M.run(source, shell_prefix)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath), source)
  f:close()
  local lua = require "spec.support.interpreter"
  local p = io.popen((shell_prefix or "") .. lua .. " " .. script .. " 2>&1")
  local out = p:read("*a")
  p:close()
  os.remove(script)
  return out
end

return M
