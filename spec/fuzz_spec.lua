-- The protocol fuzzer (test/fuzz.lua), a short fixed-seed part of it: seeded
-- random sequences of hostile yields, setwaker behaviours, stale wakers,
-- cancels and socket and channel calls; after each one the loop must be empty
-- and a fresh run must work, and while it runs no cancelled task may run and
-- no wait may return an object it did not wait on. The long run is
-- scripts/fuzz.sh (doc/reliability.md). COSOCK_FUZZ_COUNT changes the count.

local cosock = require "cosock"
local L = require "spec.support.loop"

local F = dofile("test/fuzz.lua")
local COUNT = tonumber(os.getenv("COSOCK_FUZZ_COUNT")) or 150

describe("protocol fuzzer", function()
  before_each(function()
    cosock.reset()
  end)

  it("survives " .. COUNT .. " sequences from seed 1 with every invariant kept", function()
    F.run(1, COUNT)
    assert.is_true(F.counts.resumed > 0, "no yield was ever resumed: the fuzzer tests nothing")
    assert.is_true(F.counts.ops > 0, "no cosock.op perform ever completed")
    L.assert_clean()
    L.assert_loop_works()
  end)
end)
