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

-- The refusal of a cancel made while the loop parks that very task (stop
-- called from an object's setwaker, or a finalizer, during the park).
local PARKING = "cannot cancel a task while the loop is parking it"

-- Cancels every task but the caller's. Returns the first error a cancel
-- raised (a setwaker's, a __close's), once every one was cancelled, and
-- whether a task could not be cancelled yet because the loop was parking it.
local function sweep()
  local first, parking
  for _, h in ipairs(task_handles()) do
    if not handle_is_self(h) then
      local ok, err = pcall(h.cancel, h)
      if not ok then
        if type(err) == "string" and err:find(PARKING, 1, true) then
          parking = true
        elseif first == nil then
          first = err
        end
      end
    end
  end
  return first, parking
end

-- The task stop spawns: the same sweep in the next pass, its first error
-- raised (a parked task is parked by then).
local function sweep_again()
  local first = sweep()
  if first ~= nil then error(first, 0) end
end

return function(x)
  if x ~= nil then -- (no timeout here: a drain with a deadline is a scope, doc/service.md)
    error("bad argument #1 to 'stop' (no argument expected, got " .. type(x) .. ")", 2)
  end
  local ok, first, parking = pcall(sweep)
  if not ok then first = first or "cosock.stop: failed" end
  if core.current_task() ~= nil or parking then
    core.spawn(sweep_again, "cosock.stop")       -- ends the caller at its next wait
  end
  if first ~= nil then error(first, 0) end
end
