-- A name's waiters are listed in a queue of its own; a name nobody waits on
-- any more does not keep one for ever: waiting once on each of many names
-- (each wait timing out) leaves the memory where a few names leave it.

local cosock = require "cosock"
local signal = require "cosock.signal"
local net = require "spec.support.net"

describe("signal queues", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  -- KB in use after waiting once, with timeout 0, on each of n new names.
  local function after_waits(n, base)
    cosock.spawn(function()
      for i = 1, n do assert.is_nil((signal.wait({ base, i }, 0))) end
    end, "waiter")
    net.run()
    collectgarbage()
    collectgarbage()
    return collectgarbage("count")
  end

  it("of names no longer waited on are dropped", function()
    after_waits(200, "warm")
    local few = after_waits(200, "few")
    local many = after_waits(20000, "many")
    -- (20,000 kept queues, names and nodes would take well over 1 MB)
    assert.is_true(many - few < 256, ("%.0f KB more"):format(many - few))
  end)
end)
