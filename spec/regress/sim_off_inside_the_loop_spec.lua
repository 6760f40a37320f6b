-- Regression: sim.off() (and sim.on() while on) called while the loop runs a
-- simulated task raised "cosock.reset: cannot reset while the loop is
-- running" at a line of cosock/sim.lua: the program called no reset, and
-- sim.on's own refusal named sim.lua too. Both now raise
-- "cosock.sim.<on|off>: cannot be called while the loop runs" at the
-- caller's line, and the simulation goes on untouched.

local cosock = require "cosock"
local sim = require "cosock.sim"

describe("regress: sim.on and sim.off called from inside the loop", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  for _, call in ipairs({ "off", "on" }) do
    it("sim." .. call .. "() from a simulated task raises its own error, at the caller's line", function()
      sim.on({ seed = 1 })
      local err, line, now
      cosock.spawn(function()
        cosock.socket.sleep(1)
        local ok
        ok, err = pcall(function()
          line = debug.getinfo(1, "l").currentline + 1
          sim[call]({ seed = 2 })
        end)
        assert(not ok)
        cosock.socket.sleep(1)                 -- (the simulation went on)
        now = sim.now()
      end, "caller")
      cosock.run()
      assert.are.equal(("spec/regress/sim_off_inside_the_loop_spec.lua:%d: cosock.sim.%s: cannot be called "
        .. "while the loop runs"):format(line, call), err)
      assert.are.equal(2, now)
      assert.is_true(sim.active())
    end)
  end
end)

describe("regress: sim.explore's errors from the sim.on it makes", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off(); cosock.reset() end)

  it("are explore's own: a bad option value as its argument #3, the loop's state as explore's", function()
    local ok, err = pcall(sim.explore, 1, function() end, { clock = 1e17 })
    assert.is_false(ok)
    assert.are.equal("bad argument #3 to 'cosock.sim.explore' (clock must be a finite number from -1e9 to 1e9 "
      .. "(got 1e+17))", err)
    cosock.spawn(function() end, "spawned before")
    ok, err = pcall(sim.explore, 1, function() end)
    assert.is_false(ok)
    assert.matches("^cosock%.sim%.explore: 1 task%(s%) already spawned", err)
    cosock.reset()
    local inside
    cosock.spawn(function() inside = { pcall(sim.explore, 1, function() end) } end, "explorer")
    cosock.run()
    assert.are.same({ false, "cosock.sim.explore: cannot be called while the loop runs" }, inside)
    assert.is_false(sim.active())
  end)
end)
