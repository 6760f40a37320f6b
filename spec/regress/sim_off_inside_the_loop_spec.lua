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
