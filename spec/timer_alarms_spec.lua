-- cosock.timer's alarms: now, sleep_until, after, every (schedlua's alarm
-- module) and timeout (async.fnl's timeout channel). No assertion is about
-- how long anything took: only order, "not before" a deadline, and the
-- deadlines the alarms asked for.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local timer = cosock.timer
local socket = cosock.socket
local pack = compat.pack

-- pcall(f, ...) must fail; returns the error.
local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return err
end

-- k such that d == base + k * step (within rounding), or nil.
local function grid_index(d, base, step)
  local k = (d - base) / step
  local r = math.floor(k + 0.5)
  if math.abs(k - r) < 1e-6 then return r end
  return nil
end

describe("cosock.timer alarms", function()
  before_each(function() cosock.reset() end)

  describe("now()", function()
    it("is the loop's monotonic clock, cosock.core.monotime", function()
      assert.equal(core.monotime, timer.now)
      local a = core.monotime()
      local b = timer.now()
      local c = core.monotime()
      assert.is_true(a <= b and b <= c)
    end)
  end)

  describe("sleep_until(t)", function()
    it("suspends the task until now() >= t, and returns nothing", function()
      local target = timer.now() + 0.03
      local r, woke
      cosock.spawn(function()
        r = pack(timer.sleep_until(target))
        woke = timer.now()
      end)
      cosock.run()
      assert.equal(0, r.n)
      assert.is_true(woke >= target)
      L.assert_clean()
    end)

    it("other tasks run meanwhile", function()
      local log = {}
      cosock.spawn(function() timer.sleep_until(timer.now() + 0.03); log[#log + 1] = "late" end)
      cosock.spawn(function() log[#log + 1] = "early" end)
      cosock.run()
      assert.same({ "early", "late" }, log)
    end)

    it("returns at once, without yielding, when t has passed", function()
      local passes, seen = 0, nil
      cosock.spawn(function()
        L.pass()
        local before = passes
        timer.sleep_until(timer.now() - 1)
        timer.sleep_until(timer.now())
        seen = passes - before
      end)
      cosock.spawn(function() for _ = 1, 10 do passes = passes + 1; L.pass() end end)
      cosock.run()
      assert.equal(0, seen)
    end)

    it("a task sleeping until far away can be cancelled through its handle", function()
      local h = cosock.spawn(function() timer.sleep_until(timer.now() + 3600) end, "far")
      cosock.spawn(function() L.pass(); h:cancel() end)
      cosock.run()
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("raises for a t that is not a number, or NaN", function()
      assert.truthy(L.has(err_of(timer.sleep_until, "1"),
        "bad argument #1 to 'sleep_until' (number expected, got string)"))
      assert.truthy(L.has(err_of(timer.sleep_until),
        "bad argument #1 to 'sleep_until' (number expected, got nil)"))
      assert.truthy(L.has(err_of(timer.sleep_until, 0 / 0),
        "bad argument #1 to 'sleep_until' (number expected, got nan)"))
    end)

    it("outside a task it raises the outside-a-task error (it would have to wait)", function()
      assert.truthy(L.has(err_of(timer.sleep_until, timer.now() + 10), V.WAIT_OUTSIDE))
    end)
  end)

  describe("after(s, fn, ...)", function()
    it("calls fn(...) once in a task, not before s, and returns the task's handle", function()
      local t0 = timer.now()
      local calls = {}
      local h = timer.after(0.02, function(...) calls[#calls + 1] = { at = timer.now(), args = pack(...) } end,
        "a", nil, 3, nil)
      assert.equal("table", type(h))     -- a thread handle
      assert.equal("timer.after", h.name)
      assert.is_true(h:is_alive())
      cosock.run()
      assert.equal(1, #calls)
      assert.is_true(calls[1].at >= t0 + 0.02)
      assert.same({ n = 4, "a", nil, 3, nil }, calls[1].args)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("counts s from the call, not from when its task first runs", function()
      local t0 = timer.now()
      local at
      cosock.spawn(function()
        timer.after(0.02, function() at = timer.now() end)
        socket.sleep(0.01)
      end)
      cosock.run()
      assert.is_true(at >= t0 + 0.02)
    end)

    it("fires in deadline order with other alarms", function()
      local log = {}
      timer.after(0.03, function() log[#log + 1] = 3 end)
      timer.after(0.01, function() log[#log + 1] = 1 end)
      timer.after(0.02, function() log[#log + 1] = 2 end)
      timer.after(0, function() log[#log + 1] = 0 end)
      cosock.run()
      assert.same({ 0, 1, 2, 3 }, log)
    end)

    it("cancelled through its handle before s, fn never runs", function()
      local ran = false
      local h = timer.after(0.02, function() ran = true end)
      cosock.spawn(function() h:cancel() end)
      cosock.run()
      assert.is_false(ran)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("an error in fn is the task's error: it comes out of run", function()
      timer.after(0, function() error("alarm failed", 0) end)
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "alarm failed"))
      L.assert_clean()
    end)

    it("raises for a bad s or fn", function()
      local f = function() end
      assert.truthy(L.has(err_of(timer.after, "1", f), "bad argument #1 to 'after' (number expected, got string)"))
      assert.truthy(L.has(err_of(timer.after, -1, f), "bad argument #1 to 'after' (finite number >= 0 expected, got -1)"))
      assert.truthy(L.has(err_of(timer.after, 0 / 0, f), "bad argument #1 to 'after' (finite number >= 0 expected, got"))
      assert.truthy(L.has(err_of(timer.after, math.huge, f), "bad argument #1 to 'after' (finite number >= 0 expected, got inf)"))
      assert.truthy(L.has(err_of(timer.after, 1, "f"), "bad argument #2 to 'after' (function expected, got string)"))
      assert.truthy(L.has(err_of(timer.after, 1), "bad argument #2 to 'after' (function expected, got nil)"))
      assert.equal(0, L.stats().tasks)
    end)
  end)

  describe("every(s, fn, ...)", function()
    -- Runs fn through every(s, ...) with sleep_until recorded; returns the
    -- deadlines every asked for and the handle.
    local function recorded(s, fn, ...)
      local asked = {}
      local real = timer.sleep_until
      timer.sleep_until = function(t) asked[#asked + 1] = t; return real(t) end
      local h = timer.every(s, fn, ...)
      local ok, err = pcall(cosock.run)
      timer.sleep_until = real
      assert(ok, err)
      return asked, h
    end

    it("calls fn(...) every s seconds, on the grid of its first deadline", function()
      local t0 = timer.now()
      local calls = {}
      local asked, h = recorded(0.01, function(...)
        calls[#calls + 1] = { at = timer.now(), args = pack(...) }
        if #calls == 4 then return false end
      end, "x", nil)
      assert.equal(4, #calls)
      assert.equal(4, #asked)
      assert.equal("timer.every", h.name)
      assert.is_true(asked[1] >= t0 + 0.01)
      local last = -1
      for i = 1, 4 do
        assert.same({ n = 2, "x", nil }, calls[i].args)
        assert.is_true(calls[i].at >= asked[i])          -- not before its tick
        local k = grid_index(asked[i], asked[1], 0.01)
        assert.is_not_nil(k, "deadline " .. i .. " is off the grid")
        assert.is_true(k > last)
        last = k
      end
      L.assert_clean()
    end)

    it("skips the ticks that passed while fn was busy, it does not replay them", function()
      local s = 0.01
      local calls, busy_end = 0, nil
      local asked = recorded(s, function()
        calls = calls + 1
        if calls == 2 then                     -- busy for 3.5 periods, without yielding
          local stop = timer.now() + 3.5 * s
          while timer.now() < stop do end
          busy_end = timer.now()
        end
        if calls == 4 then return false end
      end)
      assert.equal(4, #asked)
      -- the deadline after the busy call is the first tick after it ended
      assert.is_true(asked[3] > busy_end)
      local k2, k3 = grid_index(asked[2], asked[1], s), grid_index(asked[3], asked[1], s)
      assert.is_not_nil(k3)
      assert.is_true(k3 - k2 >= 4)              -- ticks in between were skipped
      assert.is_true(grid_index(asked[4], asked[3], s) >= 1)
    end)

    it("returning nil keeps it going; only false stops it", function()
      local calls = 0
      local h = timer.every(0.005, function()
        calls = calls + 1
        if calls < 3 then return nil end
        if calls < 5 then return 0 end
        return false
      end)
      cosock.run()
      assert.equal(5, calls)
      assert.is_false(h:is_alive())
    end)

    it("stops when its handle is cancelled from another task", function()
      local calls = 0
      local h = timer.every(0.005, function() calls = calls + 1 end)
      cosock.spawn(function()
        while calls < 3 do socket.sleep(0.005) end
        h:cancel()
      end)
      cosock.run()
      assert.is_true(calls >= 3)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("an error in fn comes out of run and ends it", function()
      local h = timer.every(0.005, function() error("tick failed", 0) end)
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(L.has(err, "tick failed"))
      assert.is_false(h:is_alive())
    end)

    it("raises for a bad s (zero included) or fn", function()
      local f = function() end
      assert.truthy(L.has(err_of(timer.every, 0, f), "bad argument #1 to 'every' (finite number > 0 expected, got 0)"))
      assert.truthy(L.has(err_of(timer.every, -2, f), "bad argument #1 to 'every' (finite number > 0 expected, got -2)"))
      assert.truthy(L.has(err_of(timer.every, 0 / 0, f), "bad argument #1 to 'every' (finite number > 0 expected"))
      assert.truthy(L.has(err_of(timer.every, nil, f), "bad argument #1 to 'every' (number expected, got nil)"))
      assert.truthy(L.has(err_of(timer.every, 1, {}), "bad argument #2 to 'every' (function expected, got table)"))
      assert.equal(0, L.stats().tasks)
    end)
  end)

  describe("timeout(s)", function()
    -- (on the simulation's clock: a timeout made before a task's first turn
    -- is not due by then, however slow the machine)
    require("spec.support.net").virtual_clock_each()

    it("is a channel receiver that is closed s seconds later (not before)", function()
      local t0 = timer.now()
      local rx = timer.timeout(0.02)
      assert.equal(cosock.channel.receiver, getmetatable(rx).__index)
      local r, at
      cosock.spawn(function() r = pack(rx:receive()); at = timer.now() end)
      cosock.run()
      assert.same({ n = 2, nil, "closed" }, r)
      assert.is_true(at >= t0 + 0.02)
      L.assert_clean()
    end)

    it("is usable in select, beside other objects", function()
      local tx, rx = cosock.channel.new()
      local to = timer.timeout(0.02)
      local first, second
      cosock.spawn(function()
        first = socket.select({ rx, to }, nil, 5)
        rx:receive()
        second = socket.select({ rx, to }, nil, 5)
      end)
      cosock.spawn(function() tx:send(1) end)
      cosock.run()
      assert.same({ rx }, first)
      assert.same({ to }, second)
      L.assert_clean()
    end)

    it("timeout(0) is closed from the next pass on", function()
      local rx = timer.timeout(0)
      local r
      cosock.spawn(function() r = pack(rx:receive()) end)
      cosock.run()
      assert.same({ n = 2, nil, "closed" }, r)
    end)

    it("does not keep run() going, and needs no task", function()
      timer.timeout(3600)
      assert.equal(0, L.stats().tasks)
      cosock.spawn(function() end)
      cosock.run()
      assert.equal(1, L.stats().timers)         -- still pending, on the heap
      cosock.reset()
      L.assert_clean()
    end)

    it("closes even when nothing refers to its timer", function()
      local rx = timer.timeout(0.02)
      collectgarbage()
      collectgarbage()
      local r
      cosock.spawn(function() collectgarbage(); r = pack(rx:receive()) end)
      cosock.run()
      assert.same({ n = 2, nil, "closed" }, r)
      L.assert_clean()
    end)

    it("raises for a bad s", function()
      assert.truthy(L.has(err_of(timer.timeout, "1"), "bad argument #1 to 'timeout' (number expected, got string)"))
      assert.truthy(L.has(err_of(timer.timeout, -1), "bad argument #1 to 'timeout' (finite number >= 0 expected, got -1)"))
      assert.truthy(L.has(err_of(timer.timeout, math.huge), "bad argument #1 to 'timeout' (finite number >= 0 expected, got inf)"))
      L.assert_clean()
    end)
  end)
end)
