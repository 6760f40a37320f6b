-- Per-task accounting (resumes, allocated, busy in get_thread_metadata), the
-- loop's totals (cosock.stats) and the switch for busy times
-- (cosock.set_accounting). doc/accounting-and-watchdog.md is the contract;
-- each `it` below is one of its sentences. No assertion depends on how fast
-- the machine is: busy times are only compared with each other and with 0.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local MB = 1024 * 1024

-- The metadata entry of the task named name, or nil.
local function entry(name)
  for _, e in ipairs(cosock.get_thread_metadata()) do
    if e.name == name then return e end
  end
end

-- Spins for about `n` loop iterations (work the clock can see).
local function spin(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end

describe("accounting", function()
  before_each(function()
    cosock.reset()
    cosock.set_accounting(false)
  end)
  after_each(function()
    cosock.set_accounting(false)
  end)

  describe("get_thread_metadata", function()
    it("counts resumes exactly, the running one included", function()
      local seen = {}
      local parked = L.obj("parked")
      cosock.spawn(function() L.yield({ parked }) end, "parked")
      cosock.spawn(function()
        seen.first = entry("me").resumes
        L.passes(3)
        seen.after = entry("me").resumes
        seen.parked = entry("parked").resumes
        local fresh = cosock.spawn(function() end, "fresh")
        seen.fresh = entry("fresh").resumes
        L.pass()
        seen.fresh_ran = entry("fresh")
        parked:fire()
        L.pass()
        seen.parked_after = entry("parked")
      end, "me")
      cosock.run()
      assert.equal(1, seen.first)
      assert.equal(4, seen.after)
      assert.equal(1, seen.parked)
      assert.equal(0, seen.fresh)
      assert.is_nil(seen.fresh_ran)            -- it ran once and ended
      assert.is_nil(seen.parked_after)
      assert.equal("integer", compat.math_type(seen.after))
      L.assert_clean()
    end)

    it("shows at least the bytes of a 1 MB string a task made", function()
      cosock.set_accounting(true)
      local big, small
      cosock.spawn(function()
        local s = string.rep("x", MB)
        L.pass()
        big = entry("big").allocated
        small = entry("small").allocated
        assert(#s == MB)
      end, "big")
      cosock.spawn(function() L.pass() end, "small")
      cosock.run()
      assert.equal("integer", compat.math_type(big))
      assert.is_true(big >= MB, tostring(big))
      assert.is_true(big > small, big .. " " .. small)
      L.assert_clean()
    end)

    it("counts only what a task allocates during its own turns", function()
      cosock.set_accounting(true)
      local before, after
      local o = L.obj("o")
      cosock.spawn(function() L.yield({ o }) end, "waiting")
      cosock.spawn(function()
        L.wait_until(function() return o:has_waker() end, "park")
        before = entry("waiting").allocated
        local s = string.rep("y", MB)
        after = entry("waiting").allocated
        o:fire()
        assert(#s == MB)
      end, "allocating")
      cosock.run()
      assert.equal(before, after)
      assert.is_true(before < MB, tostring(before))
      L.assert_clean()
    end)

    it("counts the setwaker calls of a task's objects in its turn", function()
      cosock.set_accounting(true)
      local kept
      local heavy = {
        setwaker = function(_, _, fn)
          if fn then kept = string.rep("s", MB) spin(1e6) end
        end,
      }
      local m
      cosock.spawn(function()
        L.pass()
        L.pass()
        m = { waiter = entry("waiter"), idle = entry("idle") }
      end, "reader")
      cosock.spawn(function() coroutine.yield({ heavy }, nil, 0) L.pass() end, "waiter")
      cosock.spawn(function() L.pass() L.pass() end, "idle")
      cosock.run()
      assert.is_true(m.waiter.allocated >= MB, tostring(m.waiter.allocated))
      assert.is_true(m.waiter.busy > m.idle.busy)
      assert(#kept == MB)
    end)

    it("counts nothing the error handler allocates", function()
      cosock.set_accounting(true)
      local after
      cosock.set_error_handler(function() _G.__spec_big = string.rep("e", MB) end)
      cosock.spawn(function() error("fails", 0) end, "failing") -- the handler runs before other's turn
      cosock.spawn(function() L.pass() after = entry("other").allocated end, "other")
      cosock.run()
      _G.__spec_big = nil
      assert.is_true(after < MB, tostring(after))
    end)

    it("counts nothing a program allocates outside run", function()
      cosock.set_accounting(true)
      local got
      local h = cosock.spawn(function() got = entry("t").allocated end, "t")
      local pre = string.rep("z", MB)          -- before the task's first turn
      cosock.run()
      assert.is_false(h:is_alive())
      assert.is_true(got < MB, tostring(got))
      assert(#pre == MB)
    end)

    it("has busy and allocated only while accounting is on; resumes always", function()
      local off, on
      cosock.spawn(function()
        off = entry("t")
        cosock.set_accounting(true)
        L.pass()
        on = entry("t")
      end, "t")
      cosock.run()
      assert.is_nil(off.busy)
      assert.is_nil(off.allocated)
      assert.equal(1, off.resumes)
      assert.equal("number", type(on.busy))
      assert.is_true(on.busy >= 0)
      assert.equal("integer", compat.math_type(on.allocated))
      assert.equal(2, on.resumes)
    end)

    it("keeps the counts while off, and goes on from them when on again", function()
      cosock.set_accounting(true)
      local first, second, third
      cosock.spawn(function()
        local s = string.rep("a", MB)
        L.pass()
        first = entry("t")
        cosock.set_accounting(false)
        local s2 = string.rep("b", 4 * MB)    -- not counted
        L.pass()
        cosock.set_accounting(true)
        second = entry("t")
        local s3 = string.rep("c", MB)
        L.pass()
        third = entry("t")
        assert(#s + #s2 + #s3 > 0)
      end, "t")
      cosock.run()
      assert.is_true(first.allocated >= MB)
      assert.is_true(second.allocated < first.allocated + 4 * MB)
      assert.is_true(second.allocated >= first.allocated)
      assert.is_true(third.allocated >= second.allocated + MB)
      assert.is_true(third.busy >= second.busy)
    end)

    it("gives a task that spins more busy time than one that does nothing", function()
      cosock.set_accounting(true)
      local m
      cosock.spawn(function()                  -- first in each pass
        L.pass()
        m = { spinner = entry("spinner"), idle = entry("idle") }
      end, "reader")
      cosock.spawn(function() spin(2e6) L.pass() end, "spinner")
      cosock.spawn(function() L.pass() end, "idle")
      cosock.run()
      assert.is_true(m.spinner.busy > 0)
      assert.is_true(m.spinner.busy > m.idle.busy, m.spinner.busy .. " vs " .. m.idle.busy)
      L.assert_clean()
    end)

    it("includes the current turn when a task asks about itself", function()
      cosock.set_accounting(true)
      local busy, allocated
      cosock.spawn(function()
        local s = string.rep("w", MB)
        spin(1e6)
        local e = entry("self")
        busy, allocated = e.busy, e.allocated
        assert(#s == MB)
      end, "self")
      cosock.run()
      assert.is_true(busy > 0)
      assert.is_true(allocated >= MB)
    end)
  end)

  describe("stats", function()
    it("is cosock.stats, with the documented fields", function()
      assert.equal(core.stats, cosock.stats)
      local s = cosock.stats()
      for _, k in ipairs({ "tasks", "ready", "parked", "timers", "fds", "passes", "polls" }) do
        assert.equal("integer", compat.math_type(s[k]), k)
      end
      assert.equal("string", type(s.backend))
      assert.is_nil(s.busy)
      cosock.set_accounting(true)
      assert.equal("number", type(cosock.stats().busy))
    end)

    it("counts live, ready and parked tasks, and armed timers", function()
      local a = L.obj("a")
      local before, after
      cosock.spawn(function() L.yield({ a }) end, "parked")
      local sleeper = cosock.spawn(function() L.yield(nil, nil, 60) end, "sleeper")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        before = cosock.stats()
        a:fire()                               -- "parked" is ready now
        after = cosock.stats()
        sleeper:cancel()
      end, "me")
      cosock.run()
      -- me runs: it is neither ready nor parked
      assert.same({ 3, 0, 2, 1 }, { before.tasks, before.ready, before.parked, before.timers })
      assert.same({ 3, 1, 1, 1 }, { after.tasks, after.ready, after.parked, after.timers })
      L.assert_clean()
    end)

    it("counts a task still to be resumed in this pass as ready", function()
      local s
      cosock.spawn(function() s = cosock.stats() end, "first")
      cosock.spawn(function() end, "second")
      cosock.run()
      assert.equal(2, s.tasks)
      assert.equal(1, s.ready)
      assert.equal(0, s.parked)
    end)

    it("counts passes and polls, and reset starts them from 0", function()
      cosock.spawn(function() L.passes(4) end, "t")
      cosock.run()
      local s = cosock.stats()
      assert.equal(5, s.passes)                -- one per turn of its five
      assert.equal(0, s.polls)                 -- zero timeouts, no fd: nothing to poll
      local a, b = L.tcp_pair()
      local w = L.wrap(a, "w")
      cosock.spawn(function() L.yield({ w }, nil, 5) end, "reader")
      cosock.spawn(function() L.pass() b:send("x") end, "writer")
      cosock.run()
      a:close() b:close()
      s = cosock.stats()
      assert.is_true(s.passes > 5)
      assert.is_true(s.polls >= 1)
      cosock.reset()
      s = cosock.stats()
      assert.same({ 0, 0 }, { s.passes, s.polls })
    end)

    it("has the loop's own busy time while accounting is on; reset zeroes it", function()
      cosock.set_accounting(true)
      cosock.spawn(function() L.passes(10) end, "t")
      cosock.run()
      local busy = cosock.stats().busy
      assert.is_true(busy > 0)
      cosock.reset()
      assert.equal(0, cosock.stats().busy)
      assert.is_true(cosock.set_accounting(false))  -- reset left it on
    end)
  end)

  describe("set_accounting", function()
    it("returns the previous setting", function()
      assert.is_false(cosock.set_accounting(true))
      assert.is_true(cosock.set_accounting(true))
      assert.is_true(cosock.set_accounting(false))
      assert.is_false(cosock.set_accounting(false))
    end)

    it("takes only a boolean", function()
      for _, v in ipairs({ 1, "yes", {} }) do
        local ok, err = pcall(cosock.set_accounting, v)
        assert.is_false(ok)
        assert.equal("bad argument #1 to 'set_accounting' (boolean expected, got " .. type(v) .. ")", err)
      end
      local ok, err = pcall(cosock.set_accounting)
      assert.is_false(ok)
      assert.equal("bad argument #1 to 'set_accounting' (boolean expected, got no value)", err)
    end)

    it("counts busy time from when it is turned on", function()
      local m
      cosock.spawn(function()
        spin(3e6)                              -- before the switch: not counted
        cosock.set_accounting(true)
        L.pass()
        m = { early = entry("early"), later = entry("later") }
      end, "early")
      cosock.spawn(function() spin(3e6) L.pass() end, "later") -- counted
      cosock.run()
      assert.is_true(m.later.busy > m.early.busy, m.later.busy .. " vs " .. m.early.busy)
    end)
  end)
end)
