-- cosock.signal: schedlua's signals (seeds/000, "the kernel"): wait, one,
-- all, on. One describe per sentence of doc/signals-and-predicates.md's
-- contract; no assertion is about how long anything took.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local signal = cosock.signal
local pack = compat.pack

-- pcall(f, ...) must fail; returns the error.
local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return err
end

-- Runs the loop until it raises the error of a task named "stop", which the
-- caller spawns last: the tasks before it stay parked.
local function run_until_stopped()
  local ok, err = pcall(cosock.run)
  assert.is_false(ok)
  assert.truthy(L.has(err, "stop here"), err)
end

describe("cosock.signal", function()
  before_each(function() cosock.reset() end)

  it("is cosock.signal and require 'cosock.signal'", function()
    assert.equal(require "cosock.signal", signal)
  end)

  describe("wait(name [, timeout])", function()
    it("returns true and the signal's arguments, nils and their count kept", function()
      local r
      cosock.spawn(function() r = pack(signal.wait("go")) end, "waiter")
      cosock.spawn(function() L.pass(); signal.one("go", nil, 2, nil, "x", nil) end, "signaller")
      cosock.run()
      assert.same({ n = 6, true, nil, 2, nil, "x", nil }, r)
      L.assert_clean()
    end)

    it("returns just true for a signal without arguments", function()
      local r
      cosock.spawn(function() r = pack(signal.wait("go")) end)
      cosock.spawn(function() L.pass(); signal.all("go") end)
      cosock.run()
      assert.same({ n = 1, true }, r)
    end)

    it("returns nil, 'timeout' when the timeout passes first", function()
      local r
      cosock.spawn(function() r = pack(signal.wait("never", 0.01)) end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
      L.assert_clean()
    end)

    it("returns the signal when one comes before the timeout", function()
      local r
      cosock.spawn(function() r = pack(signal.wait("go", 5)) end)
      cosock.spawn(function() L.pass(); signal.one("go", 1) end)
      cosock.run()
      assert.same({ n = 2, true, 1 }, r)
      L.assert_clean()
    end)

    it("with timeout 0, still receives a signal raised by a task later in the same pass", function()
      local r1, r2
      cosock.spawn(function() r1 = pack(signal.wait("now", 0)) end, "waits 0")
      cosock.spawn(function() signal.one("now", "hi") end, "same pass")
      cosock.spawn(function() r2 = pack(signal.wait("later", 0)) end, "waits 0 alone")
      cosock.run()
      assert.same({ n = 2, true, "hi" }, r1)
      assert.same({ n = 2, nil, "timeout" }, r2)
    end)

    it("lets other tasks run meanwhile", function()
      local log = {}
      cosock.spawn(function() signal.wait("go"); log[#log + 1] = "woken" end)
      cosock.spawn(function()
        for i = 1, 3 do log[#log + 1] = i; L.pass() end
        signal.one("go")
      end)
      cosock.run()
      assert.same({ 1, 2, 3, "woken" }, log)
    end)

    it("takes any value but nil and NaN as a name; 1 and 1.0 are the same name", function()
      local names = { "s", 1, 2.5, true, false, {}, print }
      local got = {}
      for i, name in ipairs(names) do
        cosock.spawn(function() got[i] = select(2, signal.wait(name)) end)
      end
      cosock.spawn(function() local _, v = signal.wait(1.0); got.float = v end)
      cosock.spawn(function()
        L.pass()
        for i, name in ipairs(names) do assert.equal(name == 1 and 2 or 1, signal.all(name, i)) end
      end)
      cosock.run()
      for i = 1, #names do assert.equal(i, got[i]) end
      assert.equal(2, got.float)
    end)

    it("raises outside a task", function()
      assert.truthy(L.has(err_of(signal.wait, "x"), "only a task can wait"))
    end)

    it("raises for a nil or NaN name", function()
      assert.equal("bad argument #1 to 'wait' (signal name expected, got nil)", err_of(signal.wait))
      assert.equal("bad argument #1 to 'wait' (signal name expected, got NaN)", err_of(signal.wait, 0 / 0))
    end)

    it("raises for a timeout that is not a number >= 0", function()
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got string)",
        err_of(signal.wait, "x", "1"))
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got -1)",
        err_of(signal.wait, "x", -1))
      assert.equal("bad argument #2 to 'wait' (number >= 0 or nil expected, got NaN)",
        err_of(signal.wait, "x", 0 / 0))
    end)

    it("a bad argument in a task is that task's error, and nothing waits", function()
      local h = cosock.spawn(function() signal.wait("x", {}) end, "bad")
      local err = select(2, pcall(cosock.run))
      assert.truthy(L.has(err, "bad argument #2 to 'wait'"))
      assert.is_false(h:is_alive())
      assert.equal(0, signal.one("x"))
    end)

    it("waits as a task waits on any object: a task waiting only on a signal ends in the stall error", function()
      cosock.spawn(function() signal.wait("nobody raises this") end, "forgotten")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.starts(L.loop_error(err), "cosock tried to call socket.select with no sockets and no timeout"))
      assert.truthy(L.has(err, [[task 'forgotten' waits for the signal "nobody raises this" (cosock.signal)]]), err)
    end)

    it("works from a coroutine whose yields the task forwards", function()
      local r
      cosock.spawn(function()
        local co = coroutine.wrap(function() return "done", pack(signal.wait("fwd")) end)
        local v = pack(co())
        while v[1] ~= "done" do v = pack(co(coroutine.yield(compat.unpack(v, 1, v.n)))) end
        r = v[2]
      end)
      cosock.spawn(function() L.pass(); assert.equal(1, signal.one("fwd", "a", nil)) end)
      cosock.run()
      assert.same({ n = 3, true, "a", nil }, r)
      L.assert_clean()
    end)
  end)

  describe("one(name, ...)", function()
    it("wakes the oldest waiter only and returns 1", function()
      local log = {}
      for i = 1, 3 do
        cosock.spawn(function()
          local _, v = signal.wait("q")
          log[#log + 1] = i .. ":" .. v
        end)
      end
      cosock.spawn(function()
        L.pass()
        assert.equal(1, signal.one("q", "a"))
        L.pass()
        assert.same({ "1:a" }, log)
        assert.equal(1, signal.one("q", "b"))
        assert.equal(1, signal.one("q", "c"))
      end)
      cosock.run()
      assert.same({ "1:a", "2:b", "3:c" }, log)
      L.assert_clean()
    end)

    it("returns 0 when nobody waits, and the signal is lost (not latched)", function()
      local r
      cosock.spawn(function()
        assert.equal(0, signal.one("early", "lost"))
        r = pack(signal.wait("early", 0.01))
      end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
    end)

    it("may be called outside a task: it wakes a parked waiter", function()
      local r
      cosock.spawn(function() r = pack(signal.wait("out")) end, "waiter")
      cosock.spawn(function() L.pass(); error("stop here") end, "stop")
      run_until_stopped()
      assert.equal(1, signal.one("out", "from outside", nil))
      assert.equal(0, signal.one("out"))
      cosock.run()
      assert.same({ n = 3, true, "from outside", nil }, r)
      L.assert_clean()
    end)

    it("does not count a waiter that timed out, and the signal goes to the next one", function()
      local o = L.obj("gate")
      local a, b, got
      cosock.spawn(function() a = pack(signal.wait("t", 0.02)) end, "times out")
      cosock.spawn(function() b = pack(signal.wait("t")) end, "waits on")
      cosock.spawn(function()
        coroutine.yield({ o })
        -- "times out" timed out in the pass that woke this task and was made
        -- ready after it: its waker is stale, its task not yet resumed.
        got = signal.one("t", "for b")
      end, "signaller")
      cosock.spawn(function()
        L.pass()
        local deadline = core.monotime() + 0.03
        while core.monotime() < deadline do end -- past the timeout, in one pass
        o:fire()
      end, "gatekeeper")
      cosock.run()
      assert.equal(1, got)
      assert.same({ n = 2, nil, "timeout" }, a)
      assert.same({ n = 2, true, "for b" }, b)
      L.assert_clean()
    end)

    it("a waiter that timed out never receives a later signal", function()
      local first, second, phase
      cosock.spawn(function()
        first = pack(signal.wait("late", 0.001))
        phase = 2
        second = pack(signal.wait("late"))
      end)
      cosock.spawn(function()
        for _ = 1, 5000 do
          if phase == 2 then break end
          cosock.socket.sleep(0.001)
        end
        assert.equal(1, signal.one("late", "second wait only"))
      end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, first)
      assert.same({ n = 2, true, "second wait only" }, second)
    end)

    it("does not count a waiter whose task was cancelled", function()
      local resumed = false
      local h = cosock.spawn(function() signal.wait("c"); resumed = true end, "cancelled")
      local r
      cosock.spawn(function() r = pack(signal.wait("c")) end, "other")
      cosock.spawn(function()
        L.pass()
        h:cancel()
        assert.equal(1, signal.one("c", "to other"))
        assert.equal(0, signal.one("c"))
      end)
      cosock.run()
      assert.is_false(resumed)
      assert.same({ n = 2, true, "to other" }, r)
      L.assert_clean()
    end)

    it("does not count a cancelled waiter that waited from a coroutine whose yields its task forwards", function()
      local h = cosock.spawn(function()
        local co = coroutine.wrap(function() return "done", signal.wait("fwd") end)
        local v = pack(co())
        while v[1] ~= "done" do v = pack(co(coroutine.yield(compat.unpack(v, 1, v.n)))) end
        error("resumed after its cancel")
      end, "forwarding")
      cosock.spawn(function()
        L.pass()
        h:cancel()
        assert.equal(0, signal.one("fwd"))
      end)
      cosock.run()
      L.assert_clean()
    end)

    it("does not keep the waiters of cancelled tasks: they do not pile up behind a long wait", function()
      cosock.spawn(function() signal.wait("pile") end, "long waiter at the head")
      cosock.spawn(function()
        L.pass()
        collectgarbage()
        local before = collectgarbage("count")
        local function round()
          local hs = {}
          for i = 1, 1000 do hs[i] = cosock.spawn(function() signal.wait("pile") end) end
          L.pass()
          for i = 1, 1000 do hs[i]:cancel() end
          -- A full collection each round: between collections the loop's
          -- weak tables (handles, outcomes) hold the dead tasks' entries, and
          -- a table keeps the size it grew to, so with a slow-paced collector
          -- (a big heap) they would grow with the rounds without any waiter
          -- being kept. Nodes that piled up would be reachable and still count.
          collectgarbage()
        end
        local function grown(rounds)
          for _ = 1, rounds do round() end
          collectgarbage()
          return collectgarbage("count") - before
        end
        local after2 = grown(2)
        local after20 = grown(18)
        -- kept: at most about twice the most waiters there were at once, not
        -- every waiter that ever was (20,000 nodes would be several MB)
        assert.is_true(after20 < after2 + 512, ("%.0f KB after 2,000 cancelled waiters, %.0f KB after 20,000"):format(
          after2, after20))
        assert.equal(1, signal.all("pile"))
      end)
      cosock.run()
      L.assert_clean()
    end)

    it("does not count a waiter that reset forgot", function()
      cosock.spawn(function() signal.wait("r") end, "forgotten")
      cosock.spawn(function() L.pass(); error("stop here") end, "stop")
      run_until_stopped()
      cosock.reset()
      assert.equal(0, signal.one("r"))
      assert.equal(0, signal.all("r"))
      local r
      cosock.spawn(function() r = pack(signal.wait("r")) end)
      cosock.spawn(function() L.pass(); assert.equal(1, signal.one("r", "new")) end)
      cosock.run()
      assert.same({ n = 2, true, "new" }, r)
    end)

    it("raises for a nil or NaN name", function()
      assert.equal("bad argument #1 to 'one' (signal name expected, got nil)", err_of(signal.one))
      assert.equal("bad argument #1 to 'one' (signal name expected, got NaN)", err_of(signal.one, 0 / 0))
    end)
  end)

  describe("all(name, ...)", function()
    it("wakes every waiter with the same arguments and returns how many", function()
      local got = {}
      for i = 1, 5 do
        cosock.spawn(function() got[i] = pack(signal.wait("every")) end)
      end
      cosock.spawn(function() L.pass(); assert.equal(5, signal.all("every", nil, "v", nil)) end)
      cosock.run()
      for i = 1, 5 do assert.same({ n = 4, true, nil, "v", nil }, got[i]) end
      L.assert_clean()
    end)

    it("returns 0 when nobody waits, and the signal is lost", function()
      local r
      cosock.spawn(function()
        assert.equal(0, signal.all("none"))
        r = pack(signal.wait("none", 0.01))
      end)
      cosock.run()
      assert.same({ n = 2, nil, "timeout" }, r)
    end)

    it("does not reach a waiter that starts waiting after it", function()
      local got = {}
      cosock.spawn(function() got[1] = select(2, signal.wait("g")) end)
      cosock.spawn(function()
        L.pass()
        assert.equal(1, signal.all("g", "first"))
        cosock.spawn(function() got[2] = select(2, signal.wait("g")) end)
        L.pass()
        assert.equal(1, signal.all("g", "second"))
      end)
      cosock.run()
      assert.same({ "first", "second" }, got)
    end)

    it("does not count waiters that timed out or were cancelled", function()
      local h = cosock.spawn(function() signal.wait("m") end, "cancelled")
      cosock.spawn(function() signal.wait("m", 0.001) end, "times out")
      local r
      cosock.spawn(function() r = select(2, signal.wait("m")) end, "stays")
      cosock.spawn(function()
        L.pass()
        h:cancel()
        cosock.timer.sleep_until(core.monotime() + 0.02)
        assert.equal(1, signal.all("m", "left"))
      end)
      cosock.run()
      assert.equal("left", r)
    end)

    it("wakes in the order the waits began, whichever way each waits", function()
      local log = {}
      cosock.spawn(function() signal.wait("o"); log[#log + 1] = "a" end)
      cosock.spawn(function() signal.on("o", function() log[#log + 1] = "b" end) end)
      cosock.spawn(function()
        local co = coroutine.wrap(function() signal.wait("o"); return "done" end)
        local v = co()
        while v ~= "done" do v = co(coroutine.yield(v)) end
        log[#log + 1] = "c"
      end)
      cosock.spawn(function() signal.wait("o"); log[#log + 1] = "d" end)
      local n
      cosock.spawn(function() L.pass(); L.pass(); n = signal.all("o") end)
      cosock.run()
      assert.equal(4, n)
      assert.same({ "a", "b", "c", "d" }, log)
    end)

    it("may be called outside a task", function()
      local n = 0
      for _ = 1, 3 do cosock.spawn(function() signal.wait("o"); n = n + 1 end) end
      cosock.spawn(function() L.pass(); error("stop here") end, "stop")
      run_until_stopped()
      assert.equal(3, signal.all("o"))
      cosock.run()
      assert.equal(3, n)
    end)

    it("wakes 10,000 waiters", function()
      local woken = 0
      for _ = 1, 10000 do cosock.spawn(function() signal.wait("fan"); woken = woken + 1 end) end
      local n
      cosock.spawn(function() L.pass(); n = signal.all("fan") end)
      cosock.run()
      assert.equal(10000, n)
      assert.equal(10000, woken)
      L.assert_clean()
    end)

    it("raises for a nil or NaN name", function()
      assert.equal("bad argument #1 to 'all' (signal name expected, got nil)", err_of(signal.all))
      assert.equal("bad argument #1 to 'all' (signal name expected, got NaN)", err_of(signal.all, 0 / 0))
    end)
  end)

  describe("on(name, fn [, taskname])", function()
    it("spawns a task that calls fn with the signal's arguments and returns its handle", function()
      local args
      local h = signal.on("ev", function(...) args = pack(...) return "done", nil end)
      assert.equal("signal.on", h.name)
      assert.is_true(h:is_alive())
      cosock.spawn(function() L.pass(); assert.equal(1, signal.one("ev", nil, 7, nil)) end)
      cosock.spawn(function() local r = pack(h:join(5)); assert.same({ n = 3, true, "done", nil }, r) end)
      cosock.run()
      assert.same({ n = 3, nil, 7, nil }, args)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("registers the waiter at call time: a signal before its task first ran reaches it", function()
      local args
      signal.on("now", function(...) args = pack(...) end)
      assert.equal(1, signal.one("now", "early"))
      cosock.run()
      assert.same({ n = 1, "early" }, args)
    end)

    it("registers in call order with wait()'s waiters: one() reaches the oldest", function()
      local log = {}
      signal.on("order", function(v) log[#log + 1] = "on " .. v end)
      cosock.spawn(function()
        local _, v = signal.wait("order")
        log[#log + 1] = "wait " .. v
      end)
      cosock.spawn(function()
        L.pass()
        signal.one("order", 1)
        signal.one("order", 2)
      end)
      cosock.run()
      table.sort(log)
      assert.same({ "on 1", "wait 2" }, log)
    end)

    it("is one-shot: a second signal does not call fn again", function()
      local calls = 0
      signal.on("once", function() calls = calls + 1 end)
      cosock.spawn(function()
        L.pass()
        assert.equal(1, signal.all("once"))
        L.pass()
        assert.equal(0, signal.all("once"))
      end)
      cosock.run()
      assert.equal(1, calls)
    end)

    it("names the task taskname", function()
      local h = signal.on("n", function() end, "my handler")
      assert.equal("my handler", h.name)
      signal.one("n")
      cosock.run()
    end)

    it("cancelled before the signal (after its task parked): fn never runs, one() counts nobody", function()
      local called = false
      local h = signal.on("x", function() called = true end)
      cosock.spawn(function()
        L.pass()
        h:cancel()
        assert.equal(0, signal.one("x"))
      end)
      cosock.run()
      assert.is_false(called)
      L.assert_clean()
    end)

    it("cancelled before its task first ran: fn never runs, one() counts nobody", function()
      local called = false
      local h = signal.on("y", function() called = true end)
      h:cancel()
      assert.equal(0, signal.one("y"))
      cosock.run()
      assert.is_false(called)
    end)

    it("an error in fn is the task's error", function()
      signal.on("boom", function(v) error("handler failed: " .. v) end, "failing")
      signal.one("boom", "why")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "handler failed: why"))
    end)

    it("raises for a bad name or a fn that is not a function, and spawns nothing", function()
      assert.equal("bad argument #1 to 'on' (signal name expected, got nil)", err_of(signal.on, nil, print))
      assert.equal("bad argument #1 to 'on' (signal name expected, got NaN)", err_of(signal.on, 0 / 0, print))
      assert.equal("bad argument #2 to 'on' (function expected, got string)", err_of(signal.on, "x", "f"))
      assert.equal(0, core.stats().tasks)
      assert.equal(0, signal.one("x"))
    end)
  end)
end)
