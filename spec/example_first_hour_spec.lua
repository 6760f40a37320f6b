-- The examples of a newcomer's first hour (examples/new_code.lua,
-- examples/scope_gather.lua) run and print what their headers say.

local cosock = require "cosock"
local L = require "spec.support.loop"

local function run_example(name)
  local out, ok, err = L.capture(dofile, "examples/" .. name .. ".lua")
  assert(ok, err)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

describe("first-hour examples", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("new_code: cosock.profile('new'), a close that wakes an acceptor and a consumer", function()
    assert.same({
      "profile before: cosock",
      "consumer got 1",
      "consumer got 2",
      "consumer: the channel is closed",
      "acceptor: accept returned nil closed",
      "run() returned",
    }, run_example("new_code"))
    assert.equal("new", cosock.profile())
  end)

  it("scope_gather: results in spawn order; a failing task's error names it", function()
    local lines = run_example("scope_gather")
    assert.equal("squares: 1 4 9 16 25", lines[1])
    assert.matches("^failed: examples/scope_gather%.lua:%d+: attempt to perform arithmetic on ", lines[2])
    assert.matches("^in task 'square of nil', spawned at examples/scope_gather%.lua:%d+$", lines[3])
    assert.equal("run() returned", lines[4])
    assert.equal(4, #lines)
  end)
end)
