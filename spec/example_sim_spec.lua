-- examples/sim_keepalive.lua: two simulated hours of keep-alives with a reset
-- and a black hole print the same lines on every run (cosock.sim).

local cosock = require "cosock"
local L = require "spec.support.loop"

local function run_example()
  local out, ok, err = L.capture(dofile, "examples/sim_keepalive.lua")
  assert(ok, err)
  return out
end

describe("examples/sim_keepalive.lua", function()
  before_each(function() cosock.reset() end)
  after_each(function() require("cosock.sim").off() end)

  it("prints what its header says, the same on every run", function()
    local out = run_example()
    assert.equal(table.concat({
      "simulated 7214 s",
      "connections ended: 3, connections made: 3, timed-out socket calls: 159",
      "1800.000000 reset     10.0.0.1:49152 -> 10.0.0.9:7000",
      "1800.000000 reset     10.0.0.9:7000 -> 10.0.0.1:49152",
      "3600.000000 blackhole 10.0.0.9 on",
      "4200.000000 blackhole 10.0.0.9 off",
    }, "\n") .. "\n", out)
    cosock.reset()
    assert.equal(out, run_example())
  end)
end)
