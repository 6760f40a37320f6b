-- cosock.when: schedlua's predicates (seeds/000, "predicates and alarms"):
-- wait, when, whenever, signal_on, and the loop's evaluation of them
-- (src/features/predicate.c). One describe per sentence of the contract in
-- doc/signals-and-predicates.md. No assertion is about how long anything
-- took; the rate checks bound the number of calls by the time that passed,
-- which only a loop that evaluates too often can break.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local when, signal = cosock.when, cosock.signal
local pack = compat.pack

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return err
end

-- A task that counts the passes it runs in: t.n goes 1..n, one a pass, and
-- t.done is set with the last.
local function ticker(n)
  local t = { n = 0 }
  cosock.spawn(function()
    for i = 1, n do
      t.n = i
      t.done = i == n
      L.pass()
    end
  end, "ticker")
  return t
end

describe("cosock.when", function()
  before_each(function() cosock.reset() end)

  it("is cosock.when and require 'cosock.when'", function()
    assert.equal(require "cosock.when", when)
  end)

  describe("wait(pred [, timeout])", function()
    it("returns pred's values once its first value is true, nils and count kept", function()
      local x, r = 0, nil
      cosock.spawn(function() r = pack(when.wait(function() if x >= 3 then return x, nil, "v", nil end end)) end)
      cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
      cosock.run()
      assert.same({ n = 4, 3, nil, "v", nil }, r)
      L.assert_clean()
    end)

    it("returns all of pred's values however many it returns when the loop evaluates it", function()
      local x, r = 0, nil
      local many = {}
      for i = 1, 200 do many[i] = i end
      cosock.spawn(function()
        r = pack(when.wait(function() if x >= 2 then return compat.unpack(many) end end))
      end)
      cosock.spawn(function() for i = 1, 4 do x = i; L.pass() end end)
      cosock.run()
      assert.equal(200, r.n)
      assert.equal(1, r[1])
      assert.equal(200, r[200])
      L.assert_clean()
    end)

    it("returns at once, without yielding, when pred is true already", function()
      local passes, seen, r = 0, nil, nil
      cosock.spawn(function()
        L.pass()
        local before = passes
        r = pack(when.wait(function() return "yes", 2 end))
        seen = passes - before
      end)
      cosock.spawn(function() for _ = 1, 5 do passes = passes + 1; L.pass() end end)
      cosock.run()
      assert.equal(0, seen)
      assert.same({ n = 2, "yes", 2 }, r)
    end)

    it("returns at once outside a task when pred is true", function()
      assert.same({ n = 2, 1, 2 }, pack(when.wait(function() return 1, 2 end)))
    end)

    it("treats false and nil alike: both keep it waiting", function()
      local results, r = { false, nil, false, "done" }, nil
      local i = 0
      cosock.spawn(function() r = when.wait(function() i = i + 1; return results[i] end) end)
      ticker(10)
      cosock.run()
      assert.equal("done", r)
      assert.equal(4, i)
    end)

    it("lets other tasks run while pred is false", function()
      local log, flag = {}, false
      cosock.spawn(function() when.wait(function() return flag end); log[#log + 1] = "woken" end)
      cosock.spawn(function()
        for i = 1, 3 do log[#log + 1] = i; L.pass() end
        flag = true
      end)
      cosock.run()
      assert.same({ 1, 2, 3, "woken" }, log)
    end)

    it("is evaluated by the loop once per pass while other tasks run", function()
      local t = ticker(20)
      local seen = {}
      cosock.spawn(function()
        when.wait(function() seen[#seen + 1] = t.n; return t.done end)
      end)
      cosock.run()
      -- seen[1] is wait's own call; the loop's follow, one per pass
      for k = 3, #seen do assert.equal(seen[k - 1] + 1, seen[k], "calls: " .. table.concat(seen, ",")) end
      assert.is_true(#seen >= 20)
    end)

    it("is evaluated while no task runs: it sees a state that lasts a while, with every task asleep", function()
      local log, woke = {}, false
      local t0 = core.monotime()
      -- true from 10 ms on until the sleeper wakes (at 500 ms); nothing runs
      -- in that time (its end is the sleeper's wake, not a time: a loaded
      -- machine that is late to evaluate it has the whole half second)
      local h = cosock.spawn(function()
        when.wait(function() return not woke and core.monotime() - t0 >= 0.01 end)
        log[#log + 1] = "predicate"
      end)
      cosock.spawn(function()
        cosock.socket.sleep(0.5)
        woke = true
        log[#log + 1] = "sleeper"
        h:cancel()
      end)
      cosock.run()
      assert.same({ "predicate", "sleeper" }, log)
    end)

    it("is evaluated at most once per interval while no task runs (10 ms by default)", function()
      assert.equal(0.01, when.get_interval())
      local calls, t0, t1 = 0, nil, nil
      local h = cosock.spawn(function()
        when.wait(function() calls = calls + 1; return false end)
      end)
      cosock.spawn(function()
        L.pass() -- after the waiter parked
        calls, t0 = 0, core.monotime()
        cosock.socket.sleep(0.2)
        t1 = core.monotime()
        h:cancel()
      end)
      cosock.run()
      assert.is_true(calls >= 1, "never evaluated while idle")
      assert.is_true(calls <= (t1 - t0) / 0.01 + 2, calls .. " calls in " .. (t1 - t0) .. " s")
    end)

    it("returns nil, 'timeout' when the timeout passes first", function()
      local r
      cosock.spawn(function() r = pack(when.wait(function() return false end, 0.01)) end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
      L.assert_clean()
    end)

    it("with timeout 0 checks now and once more after the other tasks of this pass", function()
      local x, r1, r2 = false, nil, nil
      cosock.spawn(function() r1 = pack(when.wait(function() return x end, 0)) end)
      cosock.spawn(function() x = "set" end)
      cosock.spawn(function() r2 = pack(when.wait(function() return false end, 0)) end)
      cosock.run()
      assert.same({ n = 1, "set" }, r1)
      assert.same({ n = 2, nil, "timeout" }, r2)
    end)

    it("never calls a timed-out waiter's predicate again", function()
      local calls, after = 0, nil
      cosock.spawn(function()
        assert.same({ nil, "timeout" }, { when.wait(function() calls = calls + 1 end, 0.005) })
        after = calls
      end)
      ticker(50)
      cosock.run()
      assert.is_true(after >= 1)
      assert.equal(after, calls)
    end)

    it("never calls a cancelled waiter's predicate again", function()
      local calls, at_cancel, resumed = 0, nil, false
      local h = cosock.spawn(function()
        when.wait(function() calls = calls + 1; return false end)
        resumed = true
      end)
      cosock.spawn(function()
        L.passes(3)
        h:cancel()
        at_cancel = calls
        L.passes(20)
      end)
      cosock.run()
      assert.is_false(resumed)
      assert.is_true(at_cancel >= 1)
      assert.equal(at_cancel, calls)
      L.assert_clean()
    end)

    it("a predicate that cancels its own waiter ends that wait", function()
      local h
      local calls, resumed = 0, false
      h = cosock.spawn(function()
        when.wait(function() calls = calls + 1; if calls > 1 then h:cancel() return true end end)
        resumed = true
      end)
      ticker(5)
      cosock.run()
      assert.is_false(resumed)
      assert.equal(2, calls)
    end)

    it("raises pred's error in the waiting task (a call by the loop)", function()
      local x, err = 0, nil
      local e = { "a table error" }
      if V.puc51 then
        -- PUC 5.1: a task cannot wait inside pcall; the wait itself fails
        -- there with Lua's error. Without the pcall, pred's error is the
        -- task's error, raised in it by the loop's call.
        local got = {}
        cosock.set_error_handler(function(ex, h) got[h.name] = ex end)
        cosock.spawn(function()
          err = select(2, pcall(when.wait, function() if x > 2 then error(e) end end))
        end, "in pcall")
        cosock.spawn(function() when.wait(function() if x > 2 then error(e) end end) end, "plain")
        cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
        cosock.run()
        cosock.set_error_handler(nil)
        assert.truthy(L.has(tostring(err), V.YIELD_ACROSS), tostring(err))
        assert.is_nil(got["in pcall"])
        assert.equal(e, got.plain)
        L.assert_clean()
        L.assert_loop_works()
        return
      end
      cosock.spawn(function()
        local ok
        ok, err = pcall(when.wait, function() if x > 2 then error(e) end end)
        assert.is_false(ok)
      end)
      cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
      cosock.run()
      assert.equal(e, err)
      L.assert_clean()
    end)

    it("raises pred's error in the waiting task (wait's own call)", function()
      local err
      cosock.spawn(function() err = select(2, pcall(when.wait, function() error("at once", 0) end)) end)
      cosock.run()
      assert.equal("at once", err)
    end)

    it("an error of pred not caught is the task's error, and goes out of run", function()
      cosock.spawn(function() when.wait(function() error("pred failed") end) end, "w")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "pred failed"))
    end)

    it("raises an error in the waiting task for a predicate that yields (wait's own call or the loop's)", function()
      local x, errs = 0, {}
      local preds = {
        function() coroutine.yield() end,
        function() if x > 1 then coroutine.yield(nil, nil, 0) end end,
        function() if x > 1 then cosock.socket.sleep(0) end end,
        function() if x > 1 then signal.wait("s") end end,
        function() if x > 1 then when.wait(function() return false end) end end,
      }
      if V.puc51 then
        -- PUC 5.1: a task cannot wait inside pcall: the preds that yield
        -- only when the loop calls them (2..5) never get there, the wait
        -- fails first with Lua's error; the first yields in wait's own call.
        -- Without the pcall every one is the task's error, cosock's.
        local got = {}
        cosock.set_error_handler(function(e, h) got[h.name] = e end)
        for i, p in ipairs(preds) do
          cosock.spawn(function() errs[i] = select(2, pcall(when.wait, p)) end, "in pcall " .. i)
          cosock.spawn(function() when.wait(p) end, "plain " .. i)
        end
        cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
        cosock.run()
        cosock.set_error_handler(nil)
        assert.truthy(L.has(errs[1], "a predicate must not yield"), tostring(errs[1]))
        for i = 2, #preds do
          assert.truthy(L.has(errs[i], V.YIELD_ACROSS), tostring(errs[i]))
        end
        for i = 1, #preds do
          assert.truthy(L.has(got["plain " .. i], "a predicate must not yield"), tostring(got["plain " .. i]))
          assert.is_nil(got["in pcall " .. i])
        end
        L.assert_clean()
        L.assert_loop_works()
        return
      end
      for i, p in ipairs(preds) do
        cosock.spawn(function() errs[i] = select(2, pcall(when.wait, p)) end)
      end
      cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
      cosock.run()
      for i = 1, #preds do
        assert.truthy(L.has(errs[i], "a predicate must not yield"), tostring(errs[i]))
      end
      L.assert_clean()
    end)

    it("the loop can evaluate predicates again after one raised or yielded", function()
      local x, r = 0, nil
      cosock.spawn(function() pcall(when.wait, function() if x > 1 then error("e") end end) end)
      cosock.spawn(function() pcall(when.wait, function() if x > 1 then coroutine.yield() end end) end)
      cosock.spawn(function() r = when.wait(function() return x > 3 and x end) end)
      cosock.spawn(function() for i = 1, 6 do x = i; L.pass() end end)
      cosock.run()
      assert.equal(4, r)
    end)

    it("accepts a callable table as pred", function()
      local p = setmetatable({}, { __call = function() return "called" end })
      assert.equal("called", when.wait(p))
    end)

    it("raises outside a task when pred is false", function()
      assert.truthy(L.has(err_of(when.wait, function() return false end),
        "the predicate is false and only a task can wait"))
    end)

    it("raises for a pred that is not a function, or a bad timeout", function()
      assert.equal("bad argument #1 to 'wait' (function expected, got nil)", err_of(when.wait))
      assert.equal("bad argument #1 to 'wait' (function expected, got table)", err_of(when.wait, {}))
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got string)",
        err_of(when.wait, print, "1"))
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got -0.5)",
        err_of(when.wait, print, -0.5))
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got NaN)",
        err_of(when.wait, print, 0 / 0))
    end)

    it("works from a coroutine whose yields the task forwards", function()
      local x, r = 0, nil
      cosock.spawn(function()
        local co = coroutine.wrap(function() return "done", pack(when.wait(function() return x > 2 and x end)) end)
        local v = pack(co())
        while v[1] ~= "done" do v = pack(co(coroutine.yield(compat.unpack(v, 1, v.n)))) end
        r = v[2]
      end)
      cosock.spawn(function() for i = 1, 5 do x = i; L.pass() end end)
      cosock.run()
      assert.same({ n = 1, 3 }, r)
      L.assert_clean()
    end)

    it("ends in the stall error, naming each task waiting on a predicate, when only such tasks are left",
      function()
        cosock.spawn(function() when.wait(function() return false end) end, "first waiter")
        cosock.spawn(function() when.wait(function() return nil end) end, "second waiter")
        cosock.spawn(function() signal.wait("nobody") end, "on a signal")
        local _, ok, err = L.capture(cosock.run)
        assert.is_false(ok)
        local lines = {}
        for line in L.loop_error(err):gmatch("[^\n]+") do lines[#lines + 1] = line end
        assert.truthy(L.starts(lines[1], "cosock tried to call socket.select with no sockets and no timeout"))
        -- after cosock's line and cosock-native's: one line per task (cosock.deadlock)
        assert.same({
          "  task 'first waiter' waits on a predicate (cosock.when) that stayed false",
          "  task 'second waiter' waits on a predicate (cosock.when) that stayed false",
          [[  task 'on a signal' waits for the signal "nobody" (cosock.signal), which nobody raised]],
        }, { lines[3], lines[4], lines[5] })
        assert.equal(5, #lines)
      end)

    it("does not stall while a waiter has a timeout", function()
      local r
      cosock.spawn(function() r = pack(when.wait(function() return false end, 0.02)) end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
    end)

    it("holds nothing after run returns", function()
      cosock.spawn(function() when.wait(function() return false end, 0.001) end)
      cosock.run()
      L.assert_clean()
      local r
      cosock.spawn(function() r = when.wait(function() return "again" end) end)
      cosock.run()
      assert.equal("again", r)
    end)
  end)

  describe("set_interval(s) and get_interval()", function()
    it("sets how often predicates are evaluated while no task runs, returning the previous interval", function()
      assert.equal(0.01, when.set_interval(0.05))
      assert.equal(0.05, when.get_interval())
      local calls, t0, t1 = 0, nil, nil
      local h = cosock.spawn(function() when.wait(function() calls = calls + 1 end) end)
      cosock.spawn(function()
        L.pass()
        calls, t0 = 0, core.monotime()
        cosock.socket.sleep(0.25)
        t1 = core.monotime()
        h:cancel()
      end)
      cosock.run()
      assert.is_true(calls >= 1)
      assert.is_true(calls <= (t1 - t0) / 0.05 + 2, calls .. " calls in " .. (t1 - t0) .. " s")
    end)

    it("reset() restores the default", function()
      when.set_interval(1)
      cosock.reset()
      assert.equal(0.01, when.get_interval())
    end)

    it("raises for an interval that is not a finite number > 0", function()
      for _, bad in ipairs({ 0, -1, math.huge }) do
        assert.equal("bad argument #1 to 'set_interval' (finite number > 0 expected, got " .. tostring(bad) .. ")",
          err_of(when.set_interval, bad))
      end
      assert.equal("bad argument #1 to 'set_interval' (finite number > 0 expected, got NaN)",
        err_of(when.set_interval, 0 / 0))
      assert.equal("bad argument #1 to 'set_interval' (finite number > 0 expected, got nil)",
        err_of(when.set_interval))
      assert.equal(0.01, when.get_interval())
    end)
  end)

  describe("when(pred, fn [, name])", function()
    it("spawns a task that calls fn with pred's values once, and returns its handle", function()
      local x, calls, args = 0, 0, nil
      local h = when.when(function() if x == 3 then return x, nil end end,
        function(...) calls = calls + 1; args = pack(...); return "r" end)
      assert.equal("when.when", h.name)
      cosock.spawn(function() for i = 1, 6 do x = i; L.pass() end end)
      local joined
      cosock.spawn(function() joined = pack(h:join(5)) end)
      cosock.run()
      assert.equal(1, calls)
      assert.same({ n = 2, 3, nil }, args)
      assert.same({ n = 2, true, "r" }, joined)
      L.assert_clean()
    end)

    it("names the task name", function()
      assert.equal("mine", when.when(function() return true end, function() end, "mine").name)
      cosock.run()
    end)

    it("cancelled before pred is true: fn never runs and pred is not called again", function()
      local calls, at_cancel, ran = 0, nil, false
      local h = when.when(function() calls = calls + 1 end, function() ran = true end)
      cosock.spawn(function()
        L.passes(3)
        h:cancel()
        at_cancel = calls
        L.passes(10)
      end)
      cosock.run()
      assert.is_false(ran)
      assert.equal(at_cancel, calls)
    end)

    it("raises for a bad pred or fn, and spawns nothing", function()
      assert.equal("bad argument #1 to 'when' (function expected, got nil)", err_of(when.when, nil, print))
      assert.equal("bad argument #2 to 'when' (function expected, got number)", err_of(when.when, print, 1))
      assert.equal(0, core.stats().tasks)
    end)
  end)

  describe("whenever(pred, fn [, name])", function()
    it("calls fn with pred's values each time pred is seen true", function()
      local t = ticker(12)
      local got = {}
      local h = when.whenever(function()
        if t.done then return nil end
        assert(#got < 100, "fn called over and over in one pass")
        if t.n % 3 == 0 then return t.n, "x" end
        return false
      end, function(n, s) got[#got + 1] = n .. s end)
      assert.equal("when.whenever", h.name)
      cosock.run()
      assert.same({ "3x", "6x", "9x" }, got)
      L.assert_clean()
    end)

    it("calls fn at most once per pass while pred stays true", function()
      local t = ticker(10)
      local calls = 0
      when.whenever(function()
        if t.done then return nil end
        assert(calls < 100, "fn called over and over in one pass")
        return true
      end, function() calls = calls + 1 end)
      cosock.run()
      assert.is_true(calls >= 9 and calls <= 10, calls .. " calls in 10 passes")
    end)

    it("ends when pred returns nil; false keeps it waiting", function()
      local results = { false, true, false, nil, true }
      local i, calls = 0, 0
      local h = when.whenever(function() i = i + 1; return results[i] end, function() calls = calls + 1 end)
      ticker(10)
      cosock.run()
      assert.equal(1, calls)
      assert.equal(4, i)
      assert.is_false(h:is_alive())
    end)

    it("ends at once when pred returns nothing at the first call", function()
      local calls = 0
      local h = when.whenever(function() end, function() calls = calls + 1 end)
      cosock.run()
      assert.equal(0, calls)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("ends when its handle is cancelled, and pred is not called again", function()
      local calls, at_cancel, fns = 0, nil, 0
      local h = when.whenever(function() calls = calls + 1; return calls % 2 == 0 end, function() fns = fns + 1 end)
      cosock.spawn(function()
        L.passes(6)
        h:cancel()
        at_cancel = calls
        L.passes(10)
      end)
      cosock.run()
      assert.equal(at_cancel, calls)
      assert.is_true(fns >= 1)
      L.assert_clean()
    end)

    it("fn may wait", function()
      local got = {}
      local n = 0
      when.whenever(function() n = n + 1; if n > 3 then return nil end return n end,
        function(v) cosock.socket.sleep(0.001); got[#got + 1] = v end, "sleepy")
      cosock.run()
      assert.same({ 1, 2, 3 }, got)
    end)

    it("raises for a bad pred or fn", function()
      assert.equal("bad argument #1 to 'whenever' (function expected, got string)", err_of(when.whenever, "p", print))
      assert.equal("bad argument #2 to 'whenever' (function expected, got nil)", err_of(when.whenever, print))
    end)
  end)

  describe("signal_on(pred, signame, ...)", function()
    it("raises signame with the arguments to every waiter once pred is true", function()
      local x, got = 0, {}
      for i = 1, 2 do cosock.spawn(function() got[i] = pack(signal.wait("ready")) end) end
      local h = when.signal_on(function() return x >= 2 end, "ready", "a", nil)
      assert.equal("when.signal_on", h.name)
      local woke
      cosock.spawn(function() woke = pack(h:join(5)) end)
      cosock.spawn(function() for i = 1, 4 do x = i; L.pass() end end)
      cosock.run()
      assert.same({ n = 3, true, "a", nil }, got[1])
      assert.same({ n = 3, true, "a", nil }, got[2])
      assert.same({ n = 2, true, 2 }, woke)
      L.assert_clean()
    end)

    it("raises for a bad pred or signal name", function()
      assert.equal("bad argument #1 to 'signal_on' (function expected, got nil)", err_of(when.signal_on, nil, "s"))
      assert.equal("bad argument #2 to 'signal_on' (signal name expected, got nil)", err_of(when.signal_on, print))
      assert.equal("bad argument #2 to 'signal_on' (signal name expected, got NaN)",
        err_of(when.signal_on, print, 0 / 0))
    end)
  end)
end)

describe("examples/predicates.lua (the seed's predicate and signal test programs)", function()
  before_each(function() cosock.reset() end)

  it("runs as the seed describes it", function()
    local out, ok, err = L.capture(dofile, "examples/predicates.lua")
    assert.is_true(ok, err)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    local fives = {}
    for _, line in ipairs(lines) do fives[#fives + 1] = tonumber(line:match("^!! matched 5 !! at (%d+)$")) end
    local want = {}
    for i = 5, 100, 5 do want[#want + 1] = i end
    assert.same(want, fives)
    local function at(s)
      for i, line in ipairs(lines) do if line == s then return i end end
      error("missing line: " .. s)
    end
    assert.is_true(at("!! matched 5 !! at 10") < at("PASSED: 12!!"))
    assert.is_true(at("PASSED: 12!!") < at("!! matched 5 !! at 15"))
    assert.is_true(at("reached 15!!") < at("!! matched 5 !! at 15"))
    assert.is_true(at("!! matched 5 !! at 50") < at("PASSED: 50!!"))
    assert.is_true(at("PASSED: 50!!") < at("!! matched 5 !! at 55"))
    assert.is_true(at("WHEN IDX == 75!!") < at("!! matched 5 !! at 80"))
    assert.is_true(at("counter done: signal.all woke 3") < at("finished: counter-1"))
    assert.is_true(at("finished: counter-1") < at("finished: counter-2"))
    assert.is_true(at("finished: counter-2") < at("finished: counter-3"))
    assert.equal("== EVERY 2 == seen 50 times; run() returned", lines[#lines])
    L.assert_clean()
  end)
end)
