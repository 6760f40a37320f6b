-- Regression (issue 35): under cosock.sim, when.wait(function() return
-- sim.now() >= 0.05 end) never returned and spun: the loop evaluates
-- waiting predicates every interval while no task runs and slept until
-- last + interval, but tested "due" as now - last < interval, which
-- rounding left true where the clock stood exactly at last + interval; the
-- virtual clock moves only by what the loop sleeps, so it never moved again.
-- Each step here is one pass: the bug makes the steps stop moving the clock
-- (then the bound fails the spec instead of hanging it).

local cosock = require "cosock"
local sim = require "cosock.sim"
local when = require "cosock.when"

-- Steps the loop to its end, at most `bound` passes; returns the passes.
local function steps(bound)
  local n = 0
  while cosock.step(1) do
    n = n + 1
    assert(n < bound, "the loop does not get on: " .. n .. " passes, sim.now() = " .. sim.now())
  end
  return n
end

describe("regress: a predicate on the virtual clock", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  for _, clock in ipairs({ 100000, 0, 3, 1e9, -7 }) do
    it("clock = " .. clock .. ": when.wait returns once the clock got there (with a timeout)", function()
      sim.on({ clock = clock })
      local r, at
      cosock.spawn(function()
        r = when.wait(function() return sim.now() >= 0.05 end, 10)
        at = sim.now()
      end, "waiter")
      steps(1000)
      assert.is_true(r)
      assert.is_true(at >= 0.05 and at < 0.05 + 0.011, tostring(at)) -- the next evaluation after 0.05
    end)
  end

  it("another task asleep keeps the loop going, as on the real clock", function()
    sim.on()
    local r
    cosock.spawn(function() r = when.wait(function() return sim.now() >= 0.05 end) end, "waiter")
    cosock.spawn(function() cosock.socket.sleep(1) end, "sleeper")
    steps(1000)
    assert.is_true(r)
  end)

  it("with nothing else alive it is the documented stall, not a spin", function()
    sim.on()
    cosock.spawn(function() when.wait(function() return sim.now() >= 0.05 end) end, "waiter")
    local n = 0
    local ok, err = pcall(function()
      while cosock.step(math.huge) do n = n + 1; assert(n < 1000, "spins") end
    end)
    assert.is_false(ok)
    assert.matches("waits on a predicate (cosock.when) that stayed false", tostring(err), 1, true)
  end)
end)
