--- cosock.profile([name]) -> the profile in force before the call: every
--- switch of cosock-native's at once (doc/reference.md#cosockprofile).
---   "new"    every improvement that is off by default, on: what a program
---            not written for cosock wants (close wakes its waiters, a closed
---            end is ready to select, LuaSocket's meaning of timeouts).
---   "cosock" every switch off: cosock 0.2.0's behaviour (the default, and
---            what cosock.reset() gives back).
--- With no argument it only says which is in force: "new", "cosock", or
--- "mixed" when the switches were set one by one to neither.
--- (The module is the function: cosock.lua loads it on first use.)

local core = require "cosock.core"

-- Each switch: the function that sets it and the one that reads it. A new
-- switch of doc/differences.md's "Off by default" is
-- one line here (spec/profile_spec.lua checks the list against cosock's
-- set_* functions).
local SWITCHES = {
  { set = core.set_close_wakes, get = core.close_wakes },
  { set = core.set_luasocket_timeouts, get = core.luasocket_timeouts },
}
local PROFILES = { new = true, cosock = false }

local function current()
  local on, off = 0, 0
  for _, s in ipairs(SWITCHES) do
    if s.get() then on = on + 1 else off = off + 1 end
  end
  return off == 0 and "new" or on == 0 and "cosock" or "mixed"
end

return function(...)
  local was = current()
  if select("#", ...) == 0 then return was end
  local name = ...
  local on = PROFILES[name]
  if on == nil then
    local got = type(name) == "string" and ("'" .. name .. "'") or type(name)
    error(("bad argument #1 to 'profile' ('new' or 'cosock' expected, got %s)"):format(got), 2)
  end
  for _, s in ipairs(SWITCHES) do s.set(on) end
  return was
end
