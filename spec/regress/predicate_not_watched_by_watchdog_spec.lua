-- Regression: a predicate that the loop evaluated (cosock.when) ran outside
-- the watchdog's watch: one that never returned hung the loop, whatever
-- set_watchdog said. The loop now watches each call as a turn of the waiting
-- task, which the report names.

local cosock = require "cosock"
local when = require "cosock.when"
local compat = require "cosock.compat"
local net = require "spec.support.net"

describe("regress: a predicate evaluated by the loop", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("is interrupted by the watchdog's \"error\" action, in the waiting task's name", function()
    local reports, r = {}, nil
    cosock.set_watchdog(0.05, "error", function(rep) reports[#reports + 1] = rep end)
    local calls = 0
    cosock.spawn(function()
      r = { compat.pcall(when.wait, function() -- (a pcall a task may wait in, also on 5.1)
        calls = calls + 1
        if calls > 1 then while true do end end -- the loop's evaluation never returns
        return false
      end) }
    end, "waiter")
    net.run()
    assert.is_false(r[1])
    assert.matches("task 'waiter' ran [%d.]+ s without yielding", r[2])
    assert.equal(1, #reports)
    assert.equal("waiter", reports[1].name)
  end)
end)
