-- examples/op_sieve.lua and examples/op_timeout.lua run and print what their
-- headers say.

local cosock = require "cosock"
local L = require "spec.support.loop"

local function lines_of(out)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

describe("cosock.op examples", function()
  before_each(function() cosock.reset() end)
  -- (their timeouts race their sleeps: on the simulation's clock the race
  -- has the outcome their headers print under any load)
  require("spec.support.net").virtual_clock_each()

  it("op_sieve prints the first 20 primes and cancels its tasks", function()
    local out, ok, err = L.capture(dofile, "examples/op_sieve.lua")
    assert(ok, err)
    assert.same({ "2", "3", "5", "7", "11", "13", "17", "19", "23", "29", "31", "37", "41", "43",
      "47", "53", "59", "61", "67", "71", "20 primes, 21 tasks cancelled" }, lines_of(out))
    L.assert_clean()
  end)

  it("op_timeout: the slow request times out and the server hears of it", function()
    local out, ok, err = L.capture(dofile, "examples/op_timeout.lua")
    assert(ok, err)
    assert.same({
      "request 1: reply 1 after 0.01 s",
      "request 2: timed out",
      "request 3: reply 9 after 0.02 s",
      "server: the client gave up on request 2",
    }, lines_of(out))
    L.assert_clean()
  end)
end)
