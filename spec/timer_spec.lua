-- cosock.timer's timer objects (create_oneshot, create_interval), as the
-- SmartThings hub's cosock has them: readable to select once due, until
-- handled(); intervals on the grid of their first deadline; cancel; the
-- waker protocol; the heap they share with the task timers; reset.
-- No assertion is about how long anything took: only order, "not before" a
-- deadline, and deadlines the timers computed themselves.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local timer = cosock.timer
local socket = cosock.socket
local info = core.timer_info
local pack = compat.pack

local EPS = 1e-9

-- k such that d == first + k * period, or nil when d is off that grid.
local function grid_index(d, first, period)
  local k = (d - first) / period
  local r = math.floor(k + 0.5)
  if math.abs(k - r) < 1e-6 then return r end
  return nil
end

describe("cosock.timer timer objects", function()
  before_each(function() cosock.reset() end)

  it("are exposed as cosock.timer.create_oneshot / create_interval", function()
    assert.equal(require("cosock.timer"), timer)
    assert.equal("function", type(timer.create_oneshot))
    assert.equal("function", type(timer.create_interval))
    local t = timer.create_oneshot(1)
    assert.equal("userdata", type(t))
    assert.equal("timer{}", t.class)
    assert.truthy(tostring(t):match("^timer{oneshot}: "))
    local i = timer.create_interval(1)
    assert.truthy(tostring(i):match("^timer{interval}: "))
    t:cancel()
    i:cancel()
    L.assert_clean()
  end)

  it("a oneshot is readable to select once due, and not before", function()
    local t0 = timer.now()
    local t = timer.create_oneshot(0.03)
    local r, woke
    cosock.spawn(function()
      r = pack(socket.select({ t }, nil, 5))
      woke = timer.now()
    end, "waiter")
    cosock.run()
    assert.same({ t }, r[1])
    assert.is_nil(r[3])
    assert.is_true(woke >= t0 + 0.03)
    assert.is_true(t:handled())
    L.assert_clean()
  end)

  it("stays readable until handled", function()
    local t = timer.create_oneshot(0)
    local got = {}
    cosock.spawn(function()
      for i = 1, 3 do got[i] = pack(socket.select({ t }, nil, 5)) end
      got.handled = t:handled()
      got.after = pack(socket.select({ t }, nil, 0.02))
    end, "waiter")
    cosock.run()
    for i = 1, 3 do assert.same({ t }, got[i][1]) end
    assert.is_true(got.handled)
    assert.same({ n = 3, nil, nil, "timeout" }, got.after)
    assert.equal("handled", (info(t)))
    L.assert_clean()
  end)

  it("a zero delay is due at the next pass", function()
    local t = timer.create_oneshot(0)
    local r
    cosock.spawn(function() r = pack(socket.select({ t }, nil, 5)) end)
    cosock.run()
    assert.same({ t }, r[1])
  end)

  it("an interval is readable again each period, on the grid of its first deadline", function()
    local period = 0.01
    local t = timer.create_interval(period)
    local _, first = info(t)
    local ticks = {}
    cosock.spawn(function()
      for i = 1, 4 do
        local _, due_at = info(t)
        local r = socket.select({ t }, nil, 5)
        ticks[i] = { r = r, now = timer.now(), due_at = due_at }
        assert(t:handled())
      end
      t:cancel()
    end, "ticker")
    cosock.run()
    local last = -1
    for i = 1, 4 do
      assert.same({ t }, ticks[i].r)
      assert.is_true(ticks[i].now >= ticks[i].due_at)      -- not before its tick
      local k = grid_index(ticks[i].due_at, first, period)
      assert.is_not_nil(k, "tick " .. i .. " is off the grid")
      assert.is_true(k > last)
      last = k
    end
    L.assert_clean()
  end)

  it("periods missed while nobody handled it collapse into one", function()
    local period = 0.01
    local t = timer.create_interval(period)
    local _, first = info(t)
    local res = {}
    cosock.spawn(function()
      socket.sleep(0.06)                         -- 5 or more ticks pass unhandled
      res.r = socket.select({ t }, nil, 5)
      res.handled_at = timer.now()
      res.handled = t:handled()
      res.state, res.next = info(t)
      res.again = pack(t:handled())              -- not due again at once
      t:cancel()
    end, "late")
    cosock.run()
    assert.same({ t }, res.r)
    assert.is_true(res.handled)
    assert.equal("pending", res.state)
    assert.is_true(res.next > res.handled_at)    -- the missed ticks are gone
    local k = grid_index(res.next, first, period)
    assert.is_not_nil(k, "the next tick is off the grid")
    assert.is_true(k >= 5)
    assert.is_true(first + (k - 1) * period <= res.handled_at + EPS) -- the first tick after now
    assert.same({ n = 2, nil, "not due" }, res.again)
    L.assert_clean()
  end)

  it("a late handled() does not move the grid (no drift)", function()
    local period = 0.02
    local t = timer.create_interval(period)
    local _, first = info(t)
    local dues = {}
    cosock.spawn(function()
      for i = 1, 3 do
        socket.select({ t }, nil, 5)
        socket.sleep(0.005)                      -- handle it late each time
        t:handled()
        dues[i] = select(2, info(t))
      end
      t:cancel()
    end)
    cosock.run()
    for i = 1, 3 do
      assert.is_not_nil(grid_index(dues[i], first, period), "tick " .. i .. " drifted")
    end
  end)

  -- On cosock.sim's virtual clock: under valgrind on a busy machine the
  -- 10 ms timer came due before the canceller's first turn.
  it("cancel() stops it and wakes nobody", function()
    local sim = require "cosock.sim"
    sim.on()
    local t = timer.create_oneshot(0.01)
    local tx, rx = cosock.channel.new()
    local r
    cosock.spawn(function() r = pack(socket.select({ t, rx }, nil, 5)) end, "selector")
    cosock.spawn(function()
      L.pass()
      assert(t:cancel())
      socket.sleep(0.05)                         -- well past its deadline
      tx:send("wake")
    end, "canceller")
    cosock.run()
    sim.off()
    assert.same({ rx }, r[1])                    -- only the channel
    assert.equal("cancelled", (info(t)))
    L.assert_clean()
  end)

  it("cancel() of a due timer makes it unreadable", function()
    local t = timer.create_interval(0.01)
    local r
    cosock.spawn(function()
      socket.sleep(0.03)
      assert(t:cancel())
      r = pack(socket.select({ t }, nil, 0.03))
    end)
    cosock.run()
    assert.same({ n = 3, nil, nil, "timeout" }, r)
    L.assert_clean()
  end)

  it("cancel() is idempotent: true each time, also after it fired or was handled", function()
    local a, b = timer.create_oneshot(10), timer.create_oneshot(0)
    assert.is_true(a:cancel())
    assert.is_true(a:cancel())
    cosock.spawn(function()
      socket.select({ b }, nil, 5)
      assert(b:handled())
    end)
    cosock.run()
    assert.is_true(b:cancel())
    assert.is_true(b:cancel())
    L.assert_clean()
  end)

  it("handled(): true when due, nil 'not due' otherwise, nil 'cancelled' once cancelled", function()
    local pending = timer.create_oneshot(10)
    assert.same({ n = 2, nil, "not due" }, pack(pending:handled()))
    local t = timer.create_oneshot(0)
    local r = {}
    cosock.spawn(function()
      socket.select({ t }, nil, 5)
      r[1] = pack(t:handled())
      r[2] = pack(t:handled())                   -- twice: a oneshot is over
    end)
    cosock.run()
    assert.same({ n = 1, true }, r[1])
    assert.same({ n = 2, nil, "not due" }, r[2])
    pending:cancel()
    assert.same({ n = 2, nil, "cancelled" }, pack(pending:handled()))
    L.assert_clean()
  end)

  describe("bad arguments raise", function()
    local function msg(f, ...)
      local ok, err = pcall(f, ...)
      assert.is_false(ok)
      return err
    end

    it("a delay or interval that is not a number", function()
      assert.equal("bad argument #1 to 'create_oneshot' (number expected, got string)",
        msg(timer.create_oneshot, "1"))
      assert.equal("bad argument #1 to 'create_oneshot' (number expected, got no value)",
        msg(timer.create_oneshot))
      assert.equal("bad argument #1 to 'create_interval' (number expected, got table)",
        msg(timer.create_interval, {}))
    end)

    it("NaN, infinite or negative", function()
      assert.truthy(msg(timer.create_oneshot, 0 / 0):match(
        "^bad argument #1 to 'create_oneshot' %(finite number >= 0 expected, got %-?nan%)$"))
      assert.equal("bad argument #1 to 'create_oneshot' (finite number >= 0 expected, got inf)",
        msg(timer.create_oneshot, math.huge))
      assert.equal("bad argument #1 to 'create_oneshot' (finite number >= 0 expected, got -0.5)",
        msg(timer.create_oneshot, -0.5))
      assert.equal("bad argument #1 to 'create_interval' (finite number > 0 expected, got -1)",
        msg(timer.create_interval, -1))
      assert.equal("bad argument #1 to 'create_interval' (finite number > 0 expected, got -inf)",
        msg(timer.create_interval, -math.huge))
    end)

    it("a zero interval", function()
      assert.equal("bad argument #1 to 'create_interval' (finite number > 0 expected, got 0)",
        msg(timer.create_interval, 0))
    end)

    it("methods called on something else", function()
      local t = timer.create_oneshot(1)
      assert.equal("bad argument #1 to 'handled' (cosock.timer expected, got table)",
        msg(t.handled, {}))
      assert.equal("bad argument #1 to 'cancel' (cosock.timer expected, got no value)",
        msg(t.cancel))
      assert.truthy(msg(t.wait, {}):match("bad argument #1 to 'wait' %(cosock.timer expected, got table%)"))
      assert.equal("bad argument #1 to 'settimeout' (number expected, got string)",
        msg(t.settimeout, t, "x"))
      t:cancel()
    end)

    it("nothing was armed by a failed call", function()
      pcall(timer.create_oneshot, -1)
      pcall(timer.create_interval, 0)
      L.assert_clean()
    end)
  end)

  describe("the waker protocol", function()
    it("only 'recvr': a timer in a task's sendt makes run raise and drops that task", function()
      local t = timer.create_oneshot(0)
      local ok, err = pcall(t.setwaker, t, "sendr", function() end)
      assert.is_false(ok)
      assert.equal("unsupported wake kind: sendr", err)
      local h = cosock.spawn(function() socket.select(nil, { t }, 5) end, "sender")
      ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "unsupported wake kind: sendr"))
      assert.is_false(h:is_alive())
      t:cancel()
      L.assert_loop_works()
    end)

    it("a second waker raises cosock's error (two tasks selecting on one timer)", function()
      local t = timer.create_oneshot(10)
      assert.has_no.errors(function() t:setwaker("recvr", function() end) end)
      local ok, err = pcall(t.setwaker, t, "recvr", function() end)
      assert.is_false(ok)
      assert.equal("recvr waker already set, sockets can only block one thread per waker kind", err)
      t:setwaker("recvr", nil)
      cosock.spawn(function() socket.select({ t }, nil, 5) end, "first")
      cosock.spawn(function() socket.select({ t }, nil, 5) end, "second")
      ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "recvr waker already set"))
      cosock.reset()
    end)

    it("a waker is called once when the timer comes due, and taken off first", function()
      local t = timer.create_oneshot(0.01)
      local calls = 0
      t:setwaker("recvr", function() calls = calls + 1 end)
      cosock.spawn(function() socket.sleep(0.05) end)
      cosock.run()
      assert.equal(1, calls)
      -- taken off: a new one can be set, and (the timer being due) runs at once
      t:setwaker("recvr", function() calls = calls + 10 end)
      assert.equal(11, calls)
      t:cancel()
      L.assert_clean()
    end)

    it("a waker taken back with setwaker(nil) is never called", function()
      local t = timer.create_oneshot(0.01)
      local called = false
      t:setwaker("recvr", function() called = true end)
      t:setwaker("recvr", nil)
      t:setwaker("recvr", nil)                   -- nothing set: nothing happens
      cosock.spawn(function() socket.sleep(0.04) end)
      cosock.run()
      assert.is_false(called)
      assert.equal("due", (info(t)))
      t:cancel()
    end)

    it("a waker's error comes out of run, and the loop stays usable", function()
      local t = timer.create_oneshot(0)
      t:setwaker("recvr", function() error("boom", 0) end)
      cosock.spawn(function() socket.sleep(0.02) end, "sleeper")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.equal("boom", err)
      cosock.run()                               -- the sleeper finishes
      L.assert_clean()
      t:cancel()
      L.assert_loop_works()
    end)
  end)

  describe("the heap", function()
    it("an armed timer does not keep run() going", function()
      local t = timer.create_oneshot(3600)
      local i = timer.create_interval(3600)
      local ran = false
      cosock.spawn(function() ran = true end)
      cosock.run()
      assert.is_true(ran)
      assert.equal(2, L.stats().timers)
      t:cancel()
      i:cancel()
      L.assert_clean()
    end)

    it("counts in stats().timers while pending, not once due or cancelled", function()
      local a, b = timer.create_oneshot(0), timer.create_interval(3600)
      assert.equal(2, L.stats().timers)
      cosock.spawn(function() socket.select({ a }, nil, 5) end)
      cosock.run()
      assert.equal(1, L.stats().timers)          -- a is due: off the heap
      b:cancel()
      assert.equal(0, L.stats().timers)
    end)

    -- Tasks waiting on timer objects and sleeping tasks are resumed in the
    -- order of their deadlines, also when a late pass finds them all due.
    -- On cosock.sim's virtual clock: deadlines 10 ms apart stay apart however
    -- slowly a busy machine makes the objects.
    it("timer objects and task timers come due in deadline order", function()
      local sim = require "cosock.sim"
      sim.on()
      local log = {}
      for i, d in ipairs({ 0.2, 0.05, 0.15 }) do
        local t = timer.create_oneshot(d)
        cosock.spawn(function() socket.select({ t }); log[#log + 1] = "timer" .. i end)
      end
      cosock.spawn(function() socket.sleep(0.1); log[#log + 1] = "sleep" end)
      cosock.spawn(function() socket.sleep(0.25); log[#log + 1] = "end" end)
      cosock.run()
      sim.off()
      assert.same({ "timer2", "sleep", "timer3", "timer1", "end" }, log)
      L.assert_clean()
    end)

    -- Deadlines 50 ms apart: making the objects must not take longer than
    -- the gap (it took over 10 ms under qemu on a busy machine).
    it("a late pass wakes them in deadline order too", function()
      local log = {}
      for i, d in ipairs({ 0.2, 0.05, 0.15 }) do
        local t = timer.create_oneshot(d)
        cosock.spawn(function() socket.select({ t }); log[#log + 1] = "timer" .. i end)
      end
      cosock.spawn(function() socket.sleep(0.1); log[#log + 1] = "sleep" end)
      cosock.spawn(function()
        local t0 = timer.now()
        while timer.now() - t0 < 0.3 do end     -- keep the loop busy past every deadline
      end, "busy")
      cosock.run()
      assert.same({ "timer2", "sleep", "timer3", "timer1" }, log)
      L.assert_clean()
    end)

    it("many timers come due in deadline order", function()
      local N = 2000
      local rng = 12345
      local due, log = {}, {}
      for i = 1, N do
        rng = (rng * 1103515245 + 12345) % 2147483648
        local t = timer.create_oneshot(rng / 2147483648 * 0.05)
        due[i] = select(2, info(t))
        t:setwaker("recvr", function() log[#log + 1] = i end)
      end
      cosock.spawn(function() socket.sleep(0.1) end)
      cosock.run()
      assert.equal(N, #log)
      for j = 2, N do assert.is_true(due[log[j - 1]] <= due[log[j]]) end
      L.assert_clean()
    end)

    it("100,000 live timers: the few due ones fire, the rest stay pending", function()
      local far = {}
      for i = 1, 100000 do far[i] = timer.create_oneshot(3600 + i % 100) end
      local fired = {}
      for i = 1, 3 do
        timer.create_oneshot(0.01 * i):setwaker("recvr", function() fired[#fired + 1] = i end)
      end
      assert.equal(100003, L.stats().timers)
      cosock.spawn(function() socket.sleep(0.05) end)
      cosock.run()
      assert.same({ 1, 2, 3 }, fired)
      assert.equal(100000, L.stats().timers)
      assert.equal("pending", (info(far[1])))
      assert.equal("pending", (info(far[100000])))
      for i = 1, #far do far[i]:cancel() end
      L.assert_clean()
    end)

    it("a timer collected while armed leaves the heap", function()
      for i = 1, 50 do
        if i % 2 == 0 then timer.create_oneshot(3600) else timer.create_interval(1) end
      end
      assert.equal(50, L.stats().timers)
      collectgarbage()
      collectgarbage()
      assert.equal(0, L.stats().timers)
    end)

    it("a timer with a waker set is kept until the waker ran, then collected", function()
      local fired = false
      local weak = setmetatable({}, { __mode = "v" })
      do
        local t = timer.create_oneshot(0.02)
        weak[1] = t
        t:setwaker("recvr", function() fired = true end) -- does not refer to t
      end
      collectgarbage()
      collectgarbage()
      assert.is_not_nil(weak[1])                 -- anchored by its waker
      cosock.spawn(function() socket.sleep(0.05) end)
      cosock.run()
      assert.is_true(fired)
      collectgarbage()
      collectgarbage()
      assert.is_nil(weak[1])
      L.assert_clean()
    end)

    it("a deadline years away is accepted and costs nothing meanwhile", function()
      local t = timer.create_oneshot(50 * 365 * 24 * 3600)
      local state, deadline = info(t)
      assert.equal("pending", state)
      assert.is_true(deadline > timer.now() + 49 * 365 * 24 * 3600)
      cosock.spawn(function() socket.sleep(0.01) end)
      cosock.run()
      assert.equal("pending", (info(t)))
      t:cancel()
      L.assert_clean()
    end)
  end)

  describe("the stall error", function()
    local STALL = "cosock tried to call socket.select with no sockets and no timeout"

    it("is not held off by a pending timer that nobody waits on", function()
      local t = timer.create_oneshot(0.5)        -- (the error comes at once, not after it)
      local _, rx = cosock.channel.new()
      cosock.spawn(function() rx:receive() end, "stuck")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.starts(L.loop_error(err), STALL))
      assert.equal("pending", (info(t)))
      cosock.reset()
    end)

    it("ends a task that waits only on a cancelled timer (cancel wakes nobody)", function()
      local t = timer.create_oneshot(0.01)
      cosock.spawn(function() socket.select({ t }, nil, nil) end, "waiting on a cancelled timer")
      cosock.spawn(function() t:cancel() end, "canceller")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.starts(L.loop_error(err), STALL))
      cosock.reset()
    end)

    it("waits for a pending timer that a task waits on", function()
      local t = timer.create_oneshot(0.02)
      local _, rx = cosock.channel.new()
      local r
      cosock.spawn(function() r = socket.select({ t }, nil, nil) end, "timer waiter")
      cosock.spawn(function() rx:receive() end, "stuck")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)                        -- "stuck" stalls, once the timer woke its waiter
      assert.truthy(L.starts(L.loop_error(err), STALL))
      assert.same({ t }, r)
      cosock.reset()
    end)
  end)

  describe("reset()", function()
    it("clears them: off the heap, dead (acting as cancelled), wakers taken off", function()
      local t = timer.create_interval(0.01)
      local due = timer.create_oneshot(0)
      cosock.spawn(function() socket.select({ due }, nil, 5) end)
      cosock.run()
      assert.equal("due", (info(due)))
      cosock.reset()
      L.assert_clean()
      assert.equal("cancelled", (info(t)))
      assert.equal("cancelled", (info(due)))
      assert.same({ n = 2, nil, "cancelled" }, pack(due:handled()))
      assert.is_true(t:cancel())
      local r
      cosock.spawn(function() r = pack(t:wait()) end)
      cosock.run()
      assert.same({ n = 2, nil, "cancelled" }, r)
      L.assert_clean()
    end)

    it("takes off the waker of a task that was waiting, so the timer can be waited on again", function()
      local t = timer.create_oneshot(3600)
      cosock.spawn(function() socket.select({ t }, nil, 5) end, "waiting")
      cosock.spawn(function() L.pass(); error("stop", 0) end, "stopper")
      local ok = pcall(cosock.run)
      assert.is_false(ok)                         -- "waiting" is parked on t
      cosock.reset()
      assert.has_no.errors(function() t:setwaker("recvr", function() end) end)
      t:setwaker("recvr", nil)
    end)

    it("new timers after a reset work", function()
      timer.create_oneshot(3600)
      cosock.reset()
      local t = timer.create_oneshot(0.01)
      local r
      cosock.spawn(function() r = socket.select({ t }, nil, 5) end)
      cosock.run()
      assert.same({ t }, r)
    end)
  end)

  describe("wait()", function()
    it("returns true once due, not before", function()
      local t0 = timer.now()
      local t = timer.create_oneshot(0.02)
      local r, at
      cosock.spawn(function() r = pack(t:wait()); at = timer.now() end)
      cosock.run()
      assert.same({ n = 1, true }, r)
      assert.is_true(at >= t0 + 0.02)
      assert.equal("due", (info(t)))             -- wait does not handle it
      L.assert_clean()
    end)

    it("returns at once, without yielding, when due already", function()
      local t = timer.create_oneshot(0)
      local passes, seen, r = 0, nil, nil
      cosock.spawn(function()
        socket.select({ t }, nil, 5)
        seen = passes
        r = pack(t:wait())
        seen = passes - seen
      end)
      cosock.spawn(function() for _ = 1, 20 do passes = passes + 1; L.pass() end end)
      cosock.run()
      assert.same({ n = 1, true }, r)
      assert.equal(0, seen)
    end)

    it("honours settimeout: nil, 'timeout'", function()
      local t = timer.create_oneshot(3600)
      local r = {}
      cosock.spawn(function()
        t:settimeout(0.01)
        r[1] = pack(t:wait())
        t:settimeout(0)
        r[2] = pack(t:wait())
        t:settimeout(-1)
        r[3] = pack(t:wait())
      end)
      cosock.run()
      for i = 1, 3 do assert.same({ n = 2, nil, "timeout" }, r[i]) end
      assert.equal("pending", (info(t)))
      t:cancel()
      L.assert_clean()
    end)

    it("settimeout returns nothing, and nil removes the limit", function()
      local t = timer.create_oneshot(0.02)
      assert.equal(0, select("#", t:settimeout(0.001)))
      assert.equal(0, select("#", t:settimeout(nil)))
      local r
      cosock.spawn(function() r = pack(t:wait()) end)
      cosock.run()
      assert.same({ n = 1, true }, r)
    end)

    it("nil, 'cancelled' for a cancelled timer, nil, 'handled' for a handled oneshot", function()
      local c = timer.create_oneshot(1)
      c:cancel()
      local h = timer.create_oneshot(0)
      local r = {}
      cosock.spawn(function()
        r[1] = pack(c:wait())
        assert(h:wait())
        h:handled()
        r[2] = pack(h:wait())
      end)
      cosock.run()
      assert.same({ n = 2, nil, "cancelled" }, r[1])
      assert.same({ n = 2, nil, "handled" }, r[2])
    end)

    it("a cancel while waiting wakes nobody: the wait ends by its timeout", function()
      local t = timer.create_oneshot(0.01)
      local r
      cosock.spawn(function() t:settimeout(0.05); r = pack(t:wait()) end, "waiter")
      cosock.spawn(function() t:cancel() end, "canceller")
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
      L.assert_clean()
    end)

    it("an interval: wait, handled, wait again", function()
      local t = timer.create_interval(0.01)
      local n = 0
      cosock.spawn(function()
        for _ = 1, 3 do
          assert(t:wait())
          assert(t:handled())
          n = n + 1
        end
        t:cancel()
      end)
      cosock.run()
      assert.equal(3, n)
      L.assert_clean()
    end)
  end)

  -- Events 60 ms apart (15 ms were not enough on a machine at load 16).
  it("a driver-style select over a channel and timers sees each as it comes", function()
    local tx, rx = cosock.channel.new()
    local t1 = timer.create_oneshot(0.16)
    local t2 = timer.create_oneshot(0.04)
    local names = { [t1] = "t1", [t2] = "t2", [rx] = "rx" }
    local log = {}
    cosock.spawn(function()
      local watched = { rx, t1, t2 }
      while #log < 3 do
        local ready = socket.select(watched, nil, 5)
        for _, obj in ipairs(ready) do
          log[#log + 1] = names[obj]
          if obj == rx then rx:receive() else obj:handled() end
        end
      end
    end, "driver")
    cosock.spawn(function() socket.sleep(0.1); tx:send("event") end, "device")
    cosock.run()
    assert.same({ "t2", "rx", "t1" }, log)
    L.assert_clean()
  end)
end)
