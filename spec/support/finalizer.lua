-- spec/support/finalizer.lua: any allocation may run a finalizer, and a
-- finalizer may change the loop under the function that allocated. For the
-- specs that put one inside a call:
--   inside(times, act, call [, setup [, max_tries]]) -> hits, outcomes
-- calls setup() (when given) and call() again and again, each time with a
-- new garbage object whose finalizer runs act() if it runs while call()
-- does, until that happened `times` times or after max_tries calls (default
-- 5000). Returns how many times it did and each call's { ok, result }.

local V = require "spec.support.version"

local M = {}

function M.inside(times, act, call, setup, max_tries)
  local hits, inside, tries, outcomes = 0, false, 0, {}
  max_tries = max_tries or 5000
  collectgarbage()
  local pause = collectgarbage("setpause", 10) -- (a cycle soon: finalizers run often)
  while hits < times and tries < max_tries do
    tries = tries + 1
    if setup then setup() end
    local armed = true
    V.garbage(function()
      if armed and inside then
        armed = false
        hits = hits + 1
        act()
      end
    end)
    inside = true
    local ok, r = pcall(call)
    inside = false
    outcomes[#outcomes + 1] = { ok, r }
  end
  collectgarbage("setpause", pause)
  return hits, outcomes
end

return M
