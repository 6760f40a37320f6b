-- Regression (issue 35): a timer that fell due while step(t) waited needed
-- two more step(0) calls before its task ran, where the guide says what the
-- wait wakes runs in the next step: a step ran the due timers only before
-- its wait, so the timer its own wait ended at was run by the next step
-- (which made the task ready) and the task by the one after. A step now
-- runs the timers that fell due during its wait before it returns.

local cosock = require "cosock"
local sim = require "cosock.sim"

describe("regress: what a step's wait ends runs in the next step", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off(); cosock.reset() end)

  it("a sleep that falls due during step(t) (real clock, a short wait)", function()
    local done
    cosock.spawn(function() cosock.socket.sleep(0.01); done = true end, "sleeper")
    assert.is_true(cosock.step(0))            -- it starts and sleeps
    assert.is_true(cosock.step(1))            -- waits until its timer (0.01 s)
    assert.is_nil(done)
    assert.equal(0, cosock.next_timeout())     -- ready: the next step runs it
    assert.is_false(cosock.step(0))
    assert.is_true(done)
  end)

  it("a receive timeout and a sleep under the simulation: one step each", function()
    sim.on()
    local r = {}
    cosock.spawn(function()
      local _, rx = cosock.channel.new()
      rx:settimeout(3)
      r.recv = { rx:receive() }
      r.at = sim.now()
      cosock.socket.sleep(2)
      r.slept = sim.now()
    end, "receiver")
    assert.is_true(cosock.step(0))
    assert.is_true(cosock.step(10))           -- virtual: the clock moves to 3
    assert.equal(0, cosock.next_timeout())
    assert.is_true(cosock.step(0))            -- the receive returns; it sleeps
    assert.same({ nil, "timeout" }, r.recv)
    assert.equal(3, r.at)
    assert.is_true(cosock.step(10))           -- to 5
    assert.is_false(cosock.step(0))
    assert.equal(5, r.slept)
  end)
end)
