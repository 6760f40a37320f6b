-- Regression: sim.on took any finite clock and epoch. From about 1e16 a
-- double's step is above a second, so with sim.on{clock = 1e17} (or 1e308)
-- a sleep of 0.25 s ended without the clock moving: sim.now() stayed 0 and
-- a 0.5 s timeout took no time; with epoch = 1e308 socket.gettime() stood
-- still. The clock is now bounded to +-1e9 (a step below a microsecond) and
-- the epoch to +-1e11; beyond, sim.on raises.

local cosock = require "cosock"
local sim = require "cosock.sim"

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return err
end

describe("regress: a simulated clock too far out to move", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  for _, start in ipairs({ { 1e9, 1e11 }, { -1e9, -1e11 } }) do
    local clock, epoch = start[1], start[2]
    it(("clock = %g, epoch = %g: sleeps, timeouts and gettime move by what they wait"):format(clock, epoch), function()
      sim.on({ seed = 1, clock = clock, epoch = epoch })
      local seen = {}
      cosock.spawn(function()
        local g0 = cosock.socket.gettime()
        cosock.socket.sleep(0.25)
        seen.slept = sim.now()
        cosock.socket.sleep(0.001)
        seen.ms = sim.now() - seen.slept
        local _, rx = cosock.channel.new()
        rx:settimeout(0.5)
        seen.err = select(2, rx:receive())
        seen.waited = sim.now() - seen.slept - seen.ms
        seen.gettime = cosock.socket.gettime() - g0
      end, "sleeper")
      cosock.run()
      assert.are.equal(0.25, seen.slept)
      assert.is_true(math.abs(seen.ms - 0.001) < 1e-6)
      assert.are.equal("timeout", seen.err)
      assert.is_true(math.abs(seen.waited - 0.5) < 1e-6)
      assert.is_true(math.abs(seen.gettime - 0.751) < 1e-4)
    end)
  end

  it("refuses a clock beyond 1e9 and an epoch beyond 1e11, in either direction", function()
    assert.matches("cosock.sim.on: clock must be a finite number from %-1e9 to 1e9 %(got 1e%+17%)",
      err_of(sim.on, { clock = 1e17 }))
    assert.matches("clock must be a finite number from %-1e9 to 1e9 %(got %-1e%+308%)",
      err_of(sim.on, { clock = -1e308 }))
    assert.matches("clock must be a finite number from %-1e9 to 1e9 %(got 1000000001",
      err_of(sim.on, { clock = 1e9 + 1 }))
    assert.matches("epoch must be a finite number from %-1e11 to 1e11 %(got 1e%+308%)",
      err_of(sim.on, { epoch = 1e308 }))
    assert.is_false(sim.active())              -- (nothing changed)
  end)
end)
