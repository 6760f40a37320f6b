-- Regression: signal.one woke a waiter, reset() forgot it before it ran, and
-- a later task given the same task slot was cancelled: the forgotten wake was
-- passed on, and a waiter of the new program got the old signal. A wake is
-- now passed on only by the task it woke.

local cosock = require "cosock"
local signal = require "cosock.signal"
local net = require "spec.support.net"

describe("regress: a signal.one wake that reset() forgot", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("is not passed on when a later task in its slot is cancelled", function()
    cosock.spawn(function() signal.wait("x") end, "old")
    cosock.step(0)                             -- old waits on "x"
    assert.equal(1, signal.one("x", "stale"))  -- old is woken, and never runs:
    cosock.reset()
    local got
    local new = cosock.spawn(function() cosock.socket.sleep(10) end, "new")
    cosock.spawn(function() got = { signal.wait("x", 0.05) } end, "listener")
    cosock.step(0)                             -- new sleeps, listener waits on "x"
    new:cancel()
    net.run()
    assert.same({ nil, "timeout" }, got)
  end)
end)
