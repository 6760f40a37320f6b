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

  -- The op message check allows one missing message per watchdog report
  -- made inside the wrap that records received messages (the program's
  -- code, which the watchdog may interrupt after the perform took the
  -- message): here a watchdog due at every look, at every instruction of
  -- the perform in turn, cuts some of those wraps and nothing else.
  it("excuses exactly the op messages a watchdog report cut from the recording wrap", function()
    local op = require "cosock.op"
    local ctx = { sent3 = {}, received3 = {}, received3_cut = 0, failures = {} }
    function ctx.fail(msg) ctx.failures[#ctx.failures + 1] = msg end
    local tx, rx = cosock.channel.new()
    local recv = op.recv(rx):wrap(F.record_received3(ctx))
    local pad, sleep = -1, cosock.socket.sleep
    cosock.set_error_handler(function() end)
    cosock.set_watchdog(1e-9, "error", function(r)
      if F.in_record3(r) then ctx.received3_cut = ctx.received3_cut + 1 end
    end)
    while pad < 1000 do
      cosock.spawn(function()
        while pad < 1000 do
          require("cosock.compat").pcall(sleep, 0) -- (a new turn: the watchdog's looks count from here)
          pad = pad + 1
          if #rx.link.queue == 0 and pcall(tx.send, tx, pad) then ctx.sent3[pad] = true end
          for _ = 1, pad do end
          pcall(recv.perform, recv)
        end
      end, "scan")
      cosock.run()
    end
    cosock.set_watchdog(nil)
    cosock.set_error_handler(nil)
    for _ = 1, #rx.link.queue do ctx.received3[rx:receive()] = true end
    local missing = 0
    for id in pairs(ctx.sent3) do
      if not ctx.received3[id] then missing = missing + 1 end
    end
    assert.is_true(missing > 0, "no recording wrap was cut: the check is not exercised")
    assert.is_true(missing <= ctx.received3_cut, missing .. " missing, " .. ctx.received3_cut .. " reports in the wrap")
    F.check_op_messages(ctx)
    assert.same({}, ctx.failures)
    ctx.received3_cut = missing - 1 -- (one message more than the reports excuse)
    F.check_op_messages(ctx)
    assert.equal(1, #ctx.failures)
  end)

  it("survives " .. COUNT .. " sequences from seed 1 with every invariant kept", function()
    F.run(1, COUNT)
    assert.is_true(F.counts.resumed > 0, "no yield was ever resumed: the fuzzer tests nothing")
    assert.is_true(F.counts.ops > 0, "no cosock.op perform ever completed")
    L.assert_clean()
    L.assert_loop_works()
  end)
end)
