--- cosock.stop(): a clean stop. Every task is cancelled (handle:cancel's
--- path: its waits withdrawn, its handle's joiners told "cancelled", on Lua
--- 5.4 its to-be-closed variables closed), so run returns. Called from a
--- task, the others are cancelled at once and the calling task at its next
--- wait (it may also just return), by a task stop spawns, which also cancels
--- what the caller spawned after stop. A scope's task is cancelled with
--- cleanup (handle:cancel's path for it: cosock.scope). doc/service.md.
--- (The module is the function: cosock.lua loads it on first use.)

local core = require "cosock.core"

local task_handles, handle_is_self = core.task_handles, core.handle_is_self

-- Cancels every task but the caller's; raises the first error a cancel
-- raised (a setwaker's, a __close's) once every one was cancelled.
local function sweep()
  local first
  for _, h in ipairs(task_handles()) do
    if not handle_is_self(h) then
      local ok, err = pcall(h.cancel, h)
      if not ok and first == nil then first = err end
    end
  end
  if first ~= nil then error(first, 0) end
end

return function(x)
  if x ~= nil then -- (no timeout here: a drain with a deadline is a scope, doc/service.md)
    error("bad argument #1 to 'stop' (no argument expected, got " .. type(x) .. ")", 2)
  end
  local ok, err = pcall(sweep)
  if core.current_task() ~= nil then
    core.spawn(sweep, "cosock.stop")             -- ends the caller at its next wait
  end
  if not ok then error(err, 0) end
end
