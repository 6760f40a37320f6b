-- Regression: cosock 0.2.0's timers followed the wall clock (a clock step stalled
-- them or fired them all) and cancelled timers stayed in the list until their
-- deadline. cosock-native uses a monotonic clock and removes timers at once.
-- (What can be seen from Lua: timers gone from stats as soon as the task is woken.
-- The clock itself is CLOCK_MONOTONIC in src/lib/clock.c; a Lua spec cannot step it.)

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: wall-clock timers and timers left after cancel", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a wait woken before its timeout leaves no timer behind", function()
    local timers_after
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(1000)
        cosock.spawn(function() socket.sleep(0); assert(s:send("x")) end, "writer")
        assert(c:receive(1))
        rx:settimeout(1000)
        cosock.spawn(function() tx:send(1) end, "sender")
        assert(rx:receive())
        timers_after = net.stats().timers -- only this task lives; it holds no timer
        c:close(); s:close()
      end, "waiter")
    end, "root")
    net.run()
    assert.equal(0, timers_after)
  end)

  it("a cancelled sleeper's timer is gone at once", function()
    local timers_before, timers_after
    cosock.spawn(function()
      local sleeper = cosock.spawn(function() socket.sleep(1000) end, "sleeper")
      socket.sleep(0)
      timers_before = net.stats().timers
      sleeper:cancel()
      timers_after = net.stats().timers
    end, "canceller")
    net.run()
    assert.is_true(timers_before >= 1)
    assert.equal(timers_before - 1, timers_after)
  end)
end)
