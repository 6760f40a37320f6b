-- The re-entrancy and finalizer fuzzers (test/reentry.lua), a short
-- fixed-seed part of each: callback points of the loop (setwaker, _wake,
-- getfd, dirty, wakers, predicates, the error handler, the watchdog's
-- reporter, scopes' deferred functions) and finalizers run at the loop's
-- own allocations call public functions (reset, spawn, cancel, run, sleep,
-- select, lookups, performs, a scope's cancel, a lock's acquire and
-- release, cosock.stop, an OS-signal receiver, cosock.sim, ...); the tasks
-- also run scopes, locks and OS-signal waits, one sequence in five under
-- cosock.sim. Each call works or raises a string error; after each sequence the
-- loop is empty and a fresh run works. The long runs: scripts/fuzz.sh
-- --reentry / --finalizer (doc/reliability.md). COSOCK_REENTRY_COUNT changes
-- the count; under valgrind (make check-valgrind) a few sequences only.

local cosock = require "cosock"
local L = require "spec.support.loop"

local R = dofile("test/reentry.lua")
local under_valgrind = (os.getenv("VALGRIND") or "") ~= ""
local COUNT = tonumber(os.getenv("COSOCK_REENTRY_COUNT")) or (under_valgrind and 6 or 40)

describe("re-entrancy fuzzer", function()
  before_each(function() cosock.reset() end)

  it("callback points calling public functions: " .. COUNT .. " sequences from seed 1", function()
    local calls = R.counts.calls
    R.run("reentry", 1, COUNT)
    assert.is_true(R.counts.calls > calls, "no callback made a call: the fuzzer tests nothing")
    L.assert_clean()
    L.assert_loop_works()
  end)

  -- (under valgrind as many finalizer sequences as the others: two were too
  -- few for the collector to run a finalizer inside them)
  local FIN_COUNT = under_valgrind and COUNT or math.ceil(COUNT / 4)
  it("finalizers calling public functions: " .. FIN_COUNT .. " sequences from seed 1", function()
    local finalizers = R.counts.finalizers
    R.run("finalizer", 1, FIN_COUNT)
    -- (whether the collector ran a finalizer inside these few sequences
    -- depends on what earlier specs left: more seeds, one at a time, until
    -- one did, at most 40)
    for seed = FIN_COUNT + 1, FIN_COUNT + 40 do
      if R.counts.finalizers > finalizers then break end
      R.run("finalizer", seed, 1)
    end
    assert.is_true(R.counts.finalizers > finalizers, "no finalizer ran: the fuzzer tests nothing")
    L.assert_clean()
    L.assert_loop_works()
  end)
end)
