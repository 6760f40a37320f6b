-- Conformance: timeouts (zero, negative, ordering, huge values, cancellation
-- of a timer when the task is woken first). No assertion here is about how
-- long anything took: only about order and results.

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local function pack(...) return compat.pack(...) end

describe("timers", function()
  before_each(function()
    cosock.reset()
  end)

  it("a zero timeout gives up the processor for exactly one pass", function()
    local log = {}
    for _, name in ipairs({ "a", "b" }) do
      cosock.spawn(function()
        for _ = 1, 8 do
          L.yield(nil, nil, 0)
          log[#log + 1] = name
        end
      end, name)
    end
    cosock.run()
    assert.equal(16, #log)
    L.assert_lockstep(log, "a", "b")
    L.assert_clean()
  end)

  it("a negative timeout times out on the next pass (not 'no limit')", function()
    local log, r = {}, nil
    cosock.spawn(function()
      for _ = 1, 6 do
        r = pack(L.yield(nil, nil, -1))
        assert(r[3] == "timeout")
        log[#log + 1] = "neg"
      end
    end, "neg")
    cosock.spawn(function()
      for _ = 1, 6 do
        L.yield(nil, nil, 0)
        log[#log + 1] = "zero"
      end
    end, "zero")
    cosock.run()
    assert.equal(12, #log)
    L.assert_lockstep(log, "neg", "zero")
    assert.equal(3, r.n)
    assert.is_nil(r[1])
    assert.is_nil(r[2])
    assert.equal("timeout", r[3])
    L.assert_clean()
  end)

  it("a negative timeout alone does not block the loop", function()
    local r
    local a = L.obj("a")
    cosock.spawn(function() r = pack(L.yield({ a }, nil, -0.5)) end)
    cosock.run()
    assert.equal("timeout", r[3])
    assert.is_nil(r[1])
    L.assert_clean()
  end)

  it("sleepers with different durations wake in deadline order", function()
    local order = {}
    local durations = { 5, 1, 4, 2, 6, 3 }
    -- (On the virtual clock: on the OS's, a loaded machine that paused one
    -- task's park by more than the 20 ms between deadlines reordered them.)
    require("spec.support.net").run_virtual(function()
      for _, d in ipairs(durations) do
        cosock.spawn(function()
          L.yield(nil, nil, d * 0.02)
          order[#order + 1] = d
        end, "sleep" .. d)
      end
    end)
    assert.same({ 1, 2, 3, 4, 5, 6 }, order)
    L.assert_clean()
  end)

  it("timers armed in different passes still wake in deadline order", function()
    local order = {}
    cosock.spawn(function()
      L.yield(nil, nil, 0.12)
      order[#order + 1] = "long-first"
    end)
    cosock.spawn(function()
      L.passes(2)
      L.yield(nil, nil, 0.01)
      order[#order + 1] = "short-later"
    end)
    cosock.run()
    assert.same({ "short-later", "long-first" }, order)
    L.assert_clean()
  end)

  it("equal timeouts armed in one pass wake in the order they were armed", function()
    local armed, woke = {}, {}
    for i = 1, 10 do
      cosock.spawn(function()
        armed[#armed + 1] = i
        L.yield(nil, nil, 0.03)
        woke[#woke + 1] = i
      end, "s" .. i)
    end
    cosock.run()
    assert.equal(10, #woke)
    assert.same(armed, woke)
    L.assert_clean()
  end)

  it("zero timeouts armed in one pass wake in the order they were armed", function()
    local armed, woke = {}, {}
    for i = 1, 10 do
      cosock.spawn(function()
        L.pass()
        armed[#armed + 1] = i
        L.yield(nil, nil, 0)
        woke[#woke + 1] = i
      end, "z" .. i)
    end
    cosock.run()
    assert.same(armed, woke)
    L.assert_clean()
  end)

  for _, case in ipairs({
    { V.integers and "math.maxinteger" or "2^63 (math.maxinteger's size, a float before 5.3)", V.integers and math.maxinteger or 2 ^ 63 },
    { "math.huge", math.huge },
    { "a year and a day", 366 * 24 * 3600 },
    { "2^53", 2.0 ^ 53 },
  }) do
    it("accepts a timeout of " .. case[1] .. " (task can be cancelled, run returns)", function()
      local resumed = false
      local a = L.obj("a")
      local sleeper = cosock.spawn(function()
        L.yield({ a }, nil, case[2])
        resumed = true
      end, "sleeper")
      local timers_while_parked
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        timers_while_parked = L.stats().timers
        sleeper:cancel()
      end, "canceller")
      cosock.run()
      assert.is_false(resumed)
      assert.equal(1, timers_while_parked)
      L.assert_clean()
    end)

    it("a task with a timeout of " .. case[1] .. " can still be woken by an object", function()
      local a = L.obj("a")
      local r
      cosock.spawn(function() r = pack(L.yield({ a }, nil, case[2])) end, "sleeper")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        a:fire()
      end, "waker")
      cosock.run()
      assert.same({ a }, r[1])
      assert.is_nil(r[3])
      L.assert_clean()
    end)
  end

  it("a task woken by an object before its timeout does not get 'timeout' later", function()
    local a, b = L.obj("a"), L.obj("b")
    local first, second
    local timers_in_second_wait
    cosock.spawn(function()
      first = pack(L.yield({ a }, nil, 0.05))
      -- no timeout: only b can end this wait
      second = pack(L.yield({ b }))
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park on a")
      a:fire()
      L.wait_until(function() return b:has_waker() end, "park on b")
      timers_in_second_wait = L.stats().timers
      -- outlive the first wait's timeout (as a wait, not as an assertion)
      L.yield(nil, nil, 0.15)
      b:fire()
    end, "waker")
    cosock.run()
    assert.same({ a }, first[1])
    assert.is_nil(first[3])
    assert.equal(3, second.n)
    assert.same({ b }, second[1])
    assert.is_nil(second[3])
    -- the cancelled timer is gone; only the waker task's own sleep may remain
    assert.equal(0, timers_in_second_wait)
    L.assert_clean()
  end)

  it("a timer is removed when its task is woken (stats().timers)", function()
    local a = L.obj("a")
    local before, after
    cosock.spawn(function()
      L.yield({ a }, nil, 1000)
      after = L.stats().timers
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      before = L.stats().timers
      a:fire()
    end, "waker")
    cosock.run()
    assert.equal(1, before)
    assert.equal(0, after)
    L.assert_clean()
  end)

  it("a numeric-string timeout is accepted like the number", function()
    local r
    cosock.spawn(function() r = pack(L.yield(nil, nil, "0.01")) end)
    cosock.run()
    assert.equal("timeout", r[3])
    L.assert_clean()
  end)

  it("many timers, some cancelled, leave nothing behind", function()
    local handles, woke = {}, 0
    for i = 1, 200 do
      handles[i] = cosock.spawn(function()
        L.yield(nil, nil, (i % 7) * 0.002)
        woke = woke + 1
      end)
    end
    local killed = 0
    for i = 1, 200, 3 do
      handles[i]:cancel()
      killed = killed + 1
    end
    cosock.run()
    assert.equal(200 - killed, woke)
    L.assert_clean()
  end)

  describe("cosock.socket.sleep", function()
    it("sleep(0) returns nothing and gives up the processor for one pass", function()
      local n
      local log = {}
      cosock.spawn(function()
        for i = 1, 5 do
          if i == 1 then
            n = select("#", cosock.socket.sleep(0))
          else
            cosock.socket.sleep(0)
          end
          log[#log + 1] = "sleep"
        end
      end, "sleeper")
      cosock.spawn(function()
        for _ = 1, 5 do
          L.pass()
          log[#log + 1] = "tick"
        end
      end, "ticker")
      cosock.run()
      assert.equal(0, n)
      assert.equal(10, #log)
      L.assert_lockstep(log, "sleep", "tick")
      L.assert_clean()
    end)

    it("sleep(t) returns nothing after a positive timeout", function()
      local n
      cosock.spawn(function() n = select("#", cosock.socket.sleep(0.01)) end)
      cosock.run()
      assert.equal(0, n)
      L.assert_clean()
    end)
  end)

  it("a timer re-armed in place fires in deadline order when the loop comes late", function()
    -- a's first wait ends early (woken), leaving its timer node queued; its
    -- second wait re-arms that node in place, keyed earlier than its real
    -- deadline. b's deadline lies between the two. A task then keeps the
    -- loop busy past both: b must still time out before a.
    local monotime = require("cosock.core").monotime
    local o = L.obj("o")
    local order = {}
    cosock.spawn(function()
      L.yield({ o }, nil, 0.01)
      L.yield(nil, nil, 0.06)
      order[#order + 1] = "a"
    end, "a")
    cosock.spawn(function()
      L.wait_until(function() return o:has_waker() end, "a parked")
      o:fire()
      L.pass()                  -- a is in its second wait now
      cosock.spawn(function() L.yield(nil, nil, 0.03); order[#order + 1] = "b" end, "b")
      L.pass()                  -- b is waiting
      local until_ = monotime() + 0.1
      repeat until monotime() > until_ -- the loop is blocked past both deadlines
    end, "driver")
    cosock.run()
    assert.same({ "b", "a" }, order)
    L.assert_clean()
  end)

  it("many shuffled deadlines with cancellations: each other task wakes once, no cancelled one", function()
    -- 120 timers 2 ms apart, armed in one pass in shuffled order; a third are
    -- cancelled (removed from the middle of the timer structure). The order of
    -- the wake-ups is the heap's (test/timer_heap_test.c): asserting it here
    -- would rest on clock readings.
    local n = 120
    local order = {}
    for i = 1, n do order[i] = i end
    local seed = 12345
    for i = n, 2, -1 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      local j = seed % i + 1
      order[i], order[j] = order[j], order[i]
    end
    local woke, hs, cancelled = {}, {}, {}
    for _, k in ipairs(order) do
      hs[k] = cosock.spawn(function()
        L.yield(nil, nil, 0.05 + k * 0.002)
        woke[#woke + 1] = k
      end, "t" .. k)
    end
    cosock.spawn(function()
      L.pass()
      for k = 1, n, 3 do
        if hs[k]:is_alive() then
          hs[k]:cancel()
          cancelled[k] = true
        end
      end
    end, "canceller")
    cosock.run()
    for _, k in ipairs(woke) do
      assert.is_nil(cancelled[k], "cancelled timer " .. k .. " fired")
    end
    local expected = 0
    for k = 1, n do if not cancelled[k] then expected = expected + 1 end end
    assert.equal(expected, #woke)
    L.assert_clean()
  end)

  it("twenty thousand tasks each yielding a few times all finish", function()
    local done = 0
    for i = 1, 20000 do
      cosock.spawn(function()
        L.yield(nil, nil, 0)
        L.yield(nil, nil, (i % 3) * 0.001)
        done = done + 1
      end)
    end
    cosock.run()
    assert.equal(20000, done)
    L.assert_clean()
  end)
end)
