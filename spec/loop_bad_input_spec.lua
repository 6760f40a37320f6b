-- Conformance: what the loop does with bad input (project decisions: clear
-- errors, the offending task removed, the loop usable afterwards).

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local function pack(...) return compat.pack(...) end

local assert_loop_still_works = L.assert_loop_works

-- spawns a task named `name` that yields the given values once parked, runs,
-- and returns ok, err, handle
local function run_yielding(name, ...)
  local args = pack(...)
  local h = cosock.spawn(function()
    L.pass()
    coroutine.yield(compat.unpack(args, 1, args.n))
    error("resumed after a bad yield")
  end, name)
  local ok, err = pcall(cosock.run)
  return ok, err, h
end

describe("bad input", function()
  before_each(function()
    cosock.reset()
  end)

  describe("spawn", function()
    for _, case in ipairs({
      { 42, "number" },
      { "f", "string" },
      { {}, "table" },
      { true, "boolean" },
    }) do
      it("spawn(" .. case[2] .. ") raises coroutine.create's bad argument error, as cosock does", function()
        local ok, err = pcall(cosock.spawn, case[1], "name")
        assert.is_false(ok)
        assert.equal(V.create_error(case[2]), L.loop_error(err))
        assert.equal(0, L.stats().tasks)
        cosock.run()
        L.assert_clean()
      end)
    end

    it("spawn(nil, name) raises a bad argument error", function()
      local ok, err = pcall(cosock.spawn, nil, "name")
      assert.is_false(ok)
      assert.equal(V.create_error("nil"), L.loop_error(err))
      assert.equal(0, L.stats().tasks)
    end)

    it("a callable table is not a function", function()
      local callable = setmetatable({}, { __call = function() end })
      local ok, err = pcall(cosock.spawn, callable)
      assert.is_false(ok)
      assert.equal(V.create_error("table"), L.loop_error(err))
    end)
  end)

  describe("re-entering the loop", function()
    it("cosock.run() from inside a task makes run raise 'already running'", function()
      cosock.spawn(function() cosock.run() end, "reenter")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "already running"), tostring(err))
      assert_loop_still_works()
    end)

    it("a task can catch the 'already running' error and go on", function()
      local ok_inner, err_inner, finished
      cosock.spawn(function()
        ok_inner, err_inner = pcall(cosock.run)
        L.pass()
        finished = true
      end, "reenter")
      cosock.run()
      assert.is_false(ok_inner)
      assert.is_true(L.has(tostring(err_inner), "already running"))
      assert.is_true(finished)
      L.assert_clean()
    end)

    it("cosock.reset() from inside a task raises 'cannot reset while the loop is running'", function()
      local ok_inner, err_inner
      local other_done = false
      cosock.spawn(function()
        L.yield(nil, nil, 0.01)
        other_done = true
      end, "other")
      cosock.spawn(function()
        ok_inner, err_inner = pcall(cosock.reset)
      end, "resetter")
      cosock.run()
      assert.is_false(ok_inner)
      assert.is_true(L.has(tostring(err_inner), "cannot reset while the loop is running"), tostring(err_inner))
      assert.is_true(other_done)
      L.assert_clean()
    end)

    it("an uncaught reset inside a task comes out of run", function()
      cosock.spawn(function() cosock.reset() end, "resetter")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "cannot reset while the loop is running"))
      assert_loop_still_works()
    end)
  end)

  describe("invalid recvt / sendt", function()
    for _, case in ipairs({
      { "a number recvt", "invalid recvt", 5, nil },
      { "a string recvt", "invalid recvt", "abc", nil },
      { "a boolean recvt", "invalid recvt", true, nil },
      { "a function recvt", "invalid recvt", print, nil },
      { "a number sendt", "invalid sendt", nil, 7 },
      { "a string sendt", "invalid sendt", nil, "xyz" },
      { "a boolean sendt", "invalid sendt", nil, true },
    }) do
      it(case[1] .. " raises '" .. case[2] .. "' naming the task, and removes the task", function()
        local other_steps = 0
        local other = cosock.spawn(function()
          for _ = 1, 4 do
            L.pass()
            other_steps = other_steps + 1
          end
        end, "bystander")
        local ok, err, h = run_yielding("bad-task-name-913", case[3], case[4], 1)
        assert.is_false(ok)
        assert.is_true(L.has(tostring(err), case[2]), tostring(err))
        assert.is_true(L.has(tostring(err), "bad-task-name-913"), tostring(err))
        assert.is_false(h:is_alive())
        -- the bystander keeps running in a later run
        assert.is_true(other:is_alive())
        cosock.run()
        assert.equal(4, other_steps)
        L.assert_clean()
        assert_loop_still_works()
      end)
    end
  end)

  describe("non-wakeable objects", function()
    for _, case in ipairs({
      { "a table without setwaker", function() return {} end },
      { "a number", function() return 1 end },
      { "a string", function() return "sock" end },
    }) do
      it("in recvt: " .. case[1] .. " raises 'non-wakeable socket'", function()
        local ok, err, h = run_yielding("nw", { case[2]() }, nil, 1)
        assert.is_false(ok)
        assert.is_true(L.starts(L.loop_error(err), "non-wakeable socket"), tostring(err))
        assert.is_false(h:is_alive())
        assert_loop_still_works()
      end)

      it("in sendt: " .. case[1] .. " raises 'non-wakeable socket'", function()
        local ok, err, h = run_yielding("nw", nil, { case[2]() }, 1)
        assert.is_false(ok)
        assert.is_true(L.starts(L.loop_error(err), "non-wakeable socket"), tostring(err))
        assert.is_false(h:is_alive())
        assert_loop_still_works()
      end)
    end

    it("objects set before the non-wakeable one get their waker back (setwaker nil)", function()
      local good = L.obj("good")
      local ok, err = run_yielding("nw", { good, {} }, nil, 1)
      assert.is_false(ok)
      assert.is_true(L.starts(L.loop_error(err), "non-wakeable socket"))
      if #good.calls > 0 then
        assert.is_nil(good:last_call().fn, good:trace())
      end
      assert_loop_still_works()
    end)
  end)

  describe("a setwaker that raises", function()
    it("run raises the setwaker's message and the task is removed", function()
      local good1, good2 = L.obj("good1"), L.obj("good2")
      local bad = L.obj("bad", { raise = "setwaker exploded 5521" })
      local ok, err, h = run_yielding("sw", { good1, bad }, { good2 }, 1)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "setwaker exploded 5521"), tostring(err))
      assert.is_false(h:is_alive())
      -- objects that were given a waker got it taken back
      for _, o in ipairs({ good1, good2 }) do
        local gave = false
        for _, c in ipairs(o.calls) do if c.fn ~= nil then gave = true end end
        if gave then
          assert.is_nil(o:last_call().fn, o.label .. ": " .. o:trace())
        end
      end
      assert.equal(0, L.stats().timers)
      assert_loop_still_works()
    end)

    it("a setwaker that raises a table: the error still comes out", function()
      local e = { "setwaker-table-error" }
      local bad = L.obj("bad", { raise = e })
      local ok, err, h = run_yielding("sw", { bad }, nil, nil)
      assert.is_false(ok)
      assert.is_true(rawequal(e, err) or L.has(tostring(err), tostring(e)), tostring(err))
      assert.is_false(h:is_alive())
      assert_loop_still_works()
    end)

    it("the waker given to a setwaker that then raises does not revive the task", function()
      -- setwaker stores the waker before raising
      local kept
      local bad = setmetatable({}, { __index = {
        setwaker = function(_, _, fn)
          if fn then kept = fn; error("store then raise", 0) end
        end,
      } })
      local ok, err, h = run_yielding("sw", { bad }, nil, nil)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "store then raise"))
      assert.is_function(kept)
      kept()
      assert.equal(0, L.stats().ready)
      assert.is_false(h:is_alive())
      assert_loop_still_works()
    end)
  end)

  describe("getfd", function()
    local function inner(fd, dirty)
      return {
        getfd = function() return fd end,
        dirty = function() return dirty or false end,
      }
    end

    it("getfd returning a non-number raises an error naming getfd", function()
      local w = L.wrap(inner("not-an-fd"), "w")
      local ok, err, h = run_yielding("gf", { w }, nil, 1)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "getfd"), tostring(err))
      assert.is_false(h:is_alive())
      assert_loop_still_works()
    end)

    it("getfd returning nil raises an error naming getfd", function()
      local w = L.wrap(inner(nil), "w")
      local ok, err = run_yielding("gf", nil, { w }, 1)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "getfd"), tostring(err))
      assert_loop_still_works()
    end)

    it("getfd returning -1: the object is not polled and the wait times out normally", function()
      local w = L.wrap(inner(-1), "w")
      local r, fds_while_waiting
      cosock.spawn(function() r = pack(L.yield({ w }, { w }, 0.02)) end, "waiter")
      cosock.spawn(function()
        L.wait_until(function() return w:has_waker("recvr") end, "park")
        fds_while_waiting = L.stats().fds
      end, "observer")
      cosock.run()
      assert.equal(3, r.n)
      assert.is_nil(r[1])
      assert.is_nil(r[2])
      assert.equal("timeout", r[3])
      assert.equal(0, fds_while_waiting)
      assert.same({}, w.wakes)
      L.assert_clean()
    end)

    it("getfd returning -1 with no timeout and nothing else: with set_close_wakes(true) the stuck error", function()
      -- (by default the loop blocks for ever there, as cosock's select does:
      -- spec/interrupt_spec.lua)
      cosock.set_close_wakes(true)
      local w = L.wrap(inner(-1), "w")
      cosock.spawn(function() L.yield({ w }) end, "waiter")
      local _, ok, err = L.capture(cosock.run)
      cosock.set_close_wakes(false)
      assert.is_false(ok)
      assert.is_true(L.starts(L.loop_error(err),
        "cosock tried to call socket.select with no sockets and no timeout"), tostring(err))
    end)

    it("getfd that raises: the error comes out of run and the loop stays usable", function()
      local w = L.wrap({
        getfd = function() error("getfd exploded 8830", 0) end,
        dirty = function() return false end,
      }, "w")
      local ok, err, h = run_yielding("gf", { w }, nil, 1)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "getfd exploded 8830"), tostring(err))
      assert.is_false(h:is_alive())
      assert_loop_still_works()
    end)

    it("an fd number past the loop's limit (2^28) is refused before any array grows for it", function()
      local fd = 268435456 + 5 -- 2^28 + 5, an integer (no << before 5.3)
      local w = L.wrap(inner(fd), "w")
      local ok, err = run_yielding("gf", { w }, nil, 1)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "cosock: descriptor " .. fd .. " is too large"), tostring(err))
      assert_loop_still_works()
    end)

    it("an fd number that is not open: run fails with the poller's error, no crash or hang", function()
      local w = L.wrap(inner(4000), "w")
      cosock.spawn(function() L.yield({ w }, nil, 0.05) end, "waiter")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "cosock: cannot poll fd 4000 of task 'waiter': Bad file descriptor"),
                     tostring(err))
      cosock.reset()
      assert_loop_still_works()
    end)

    it("an object with inner_sock can still be woken through its waker", function()
      local w = L.wrap(inner(-1), "w")
      local r
      cosock.spawn(function() r = pack(L.yield({ w }, nil, 5)) end, "waiter")
      cosock.spawn(function()
        L.wait_until(function() return w:has_waker() end, "park")
        w:fire()
      end, "waker")
      cosock.run()
      assert.same({ w }, r[1])
      L.assert_clean()
    end)
  end)

  describe("timeouts", function()
    for _, case in ipairs({
      { "a table", {} },
      { "a non-numeric string", "soon" },
      { "a boolean true", true },
      { "a function", print },
      { "NaN", 0 / 0 },
    }) do
      it(case[1] .. " timeout raises 'invalid timeout' and removes the task", function()
        local ok, err, h = run_yielding("bad-timeout", nil, nil, case[2])
        assert.is_false(ok)
        assert.is_true(L.has(tostring(err), "invalid timeout"), tostring(err))
        assert.is_false(h:is_alive())
        assert.equal(0, L.stats().timers)
        assert_loop_still_works()
      end)
    end

    it("a NaN timeout with objects clears their wakers", function()
      local a = L.obj("a")
      local ok, err, h = run_yielding("nan", { a }, nil, 0 / 0)
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "invalid timeout"), tostring(err))
      assert.is_false(h:is_alive())
      if #a.calls > 0 then
        assert.is_nil(a:last_call().fn, a:trace())
      end
      assert_loop_still_works()
    end)
  end)
end)
