-- Conformance: the waker protocol as an object sees it (setwaker calls, waker
-- validity, stale and repeated wakers, cancelled tasks).

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local function pack(...) return compat.pack(...) end

local function count(obj, kind, typ)
  local n = 0
  for _, c in ipairs(obj.calls) do
    if c.kind == kind and type(c.fn) == typ then n = n + 1 end
  end
  return n
end

local function last_of_kind(obj, kind)
  local last
  for _, c in ipairs(obj.calls) do
    if c.kind == kind then last = c end
  end
  return last
end

describe("wakers", function()
  before_each(function()
    cosock.reset()
  end)

  it("setwaker(kind, fn) when the task parks; the waker clears itself; the loop clears again before resuming", function()
    local a = L.obj("a")
    local at_park, after_fire, at_resume
    cosock.spawn(function()
      L.yield({ a }, nil, 5)
      at_resume = a:trace()
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker("recvr") end, "park")
      at_park = a:trace()
      a:fire("recvr")
      after_fire = a:trace()
    end, "waker")
    cosock.run()
    assert.equal("recvr:function", at_park)
    assert.equal("recvr:function,recvr:nil", after_fire)
    assert.equal("recvr:function,recvr:nil,recvr:nil", at_resume)
    assert.equal("recvr:function,recvr:nil,recvr:nil", a:trace())
    L.assert_clean()
  end)

  it("sendt objects get setwaker('sendr', ...)", function()
    local b = L.obj("b")
    cosock.spawn(function() L.yield(nil, { b }, 5) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return b:has_waker("sendr") end, "park")
      b:fire("sendr")
    end, "waker")
    cosock.run()
    assert.equal("sendr:function,sendr:nil,sendr:nil", b:trace())
    L.assert_clean()
  end)

  it("after a timeout only the loop's setwaker(kind, nil)", function()
    local a, b = L.obj("a"), L.obj("b")
    local r
    cosock.spawn(function() r = pack(L.yield({ a }, { b }, 0.01)) end)
    cosock.run()
    assert.equal("timeout", r[3])
    assert.equal("recvr:function,recvr:nil", a:trace())
    assert.equal("sendr:function,sendr:nil", b:trace())
    L.assert_clean()
  end)

  it("objects not woken get only the loop's nil", function()
    local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
    cosock.spawn(function() L.yield({ a, b }, { c }) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return c:has_waker("sendr") end, "park")
      b:fire("recvr")
    end, "waker")
    cosock.run()
    assert.equal("recvr:function,recvr:nil", a:trace())
    assert.equal("recvr:function,recvr:nil,recvr:nil", b:trace())
    assert.equal("sendr:function,sendr:nil", c:trace())
    L.assert_clean()
  end)

  it("an object in recvt and sendt gets one waker per kind and both are cleared", function()
    local a = L.obj("a")
    local r
    cosock.spawn(function() r = pack(L.yield({ a }, { a }, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker("recvr") and a:has_waker("sendr") end, "park")
      a:fire("recvr")
    end, "waker")
    cosock.run()
    assert.equal(1, count(a, "recvr", "function"))
    assert.equal(1, count(a, "sendr", "function"))
    assert.equal(2, count(a, "recvr", "nil"))
    assert.equal(1, count(a, "sendr", "nil"))
    assert.is_nil(last_of_kind(a, "recvr").fn)
    assert.is_nil(last_of_kind(a, "sendr").fn)
    assert.same({ a }, r[1])
    assert.is_nil(r[2])
    L.assert_clean()
  end)

  it("each wait gets a new setwaker(kind, fn) and every one is cleared", function()
    local a = L.obj("a")
    local got = 0
    cosock.spawn(function()
      for _ = 1, 5 do
        local r = L.yield({ a }, nil, 5)
        if r then got = got + 1 end
      end
    end, "waiter")
    cosock.spawn(function()
      for _ = 1, 5 do
        L.wait_until(function() return a:has_waker() end, "park")
        a:fire()
      end
    end, "waker")
    cosock.run()
    assert.equal(5, got)
    assert.equal(5, count(a, "recvr", "function"))
    assert.equal(10, count(a, "recvr", "nil"))
    L.assert_clean()
  end)

  it("a waker called from inside setwaker (object already ready) wakes the task", function()
    local a = L.obj("a", { ready = true })
    local r
    cosock.spawn(function() r = pack(L.yield({ a }, nil, 5)) end)
    cosock.run()
    assert.equal(3, r.n)
    assert.same({ a }, r[1])
    assert.is_nil(r[2])
    assert.is_nil(r[3])
    assert.equal("recvr:function,recvr:nil,recvr:nil", a:trace())
    L.assert_clean()
  end)

  it("a task woken from inside setwaker runs in the next pass, not the same one", function()
    -- The ready-object task and a zero-timeout ticker must advance in lockstep;
    -- if a task woken while parking were resumed in the same pass it would run
    -- all its rounds before the ticker's first.
    local a = L.obj("a", { ready = true })
    local log = {}
    cosock.spawn(function()
      for _ = 1, 6 do
        local r = L.yield({ a }, nil, 5)
        assert(r and r[1] == a)
        log[#log + 1] = "ready"
      end
    end, "ready")
    cosock.spawn(function()
      for _ = 1, 6 do
        L.pass()
        log[#log + 1] = "tick"
      end
    end, "ticker")
    cosock.run()
    assert.equal(12, #log)
    L.assert_lockstep(log, "ready", "tick")
    L.assert_clean()
  end)

  it("a waker ignores any arguments it is called with", function()
    local a = L.obj("a")
    local r
    cosock.spawn(function() r = pack(L.yield({ a }, nil, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      a:last_waker()("recvr", 42, {}, nil, "x")
    end, "waker")
    cosock.run()
    assert.same({ a }, r[1])
    assert.is_nil(r[2])
    assert.is_nil(r[3])
    L.assert_clean()
  end)

  it("a waker called twice lists the object once and does nothing the second time", function()
    local a = L.obj("a")
    local r, after_second
    cosock.spawn(function() r = pack(L.yield({ a }, nil, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      local w = a:last_waker()
      w()
      w()
      after_second = a:trace()
    end, "waker")
    cosock.run()
    assert.equal(1, #r[1])
    assert.is_true(rawequal(a, r[1][1]))
    assert.equal("recvr:function,recvr:nil", after_second)
    assert.equal("recvr:function,recvr:nil,recvr:nil", a:trace())
    L.assert_clean()
  end)

  it("a waker called again after the task was resumed does nothing", function()
    local a = L.obj("a")
    local r, resumed
    cosock.spawn(function()
      r = pack(L.yield({ a }, nil, 5))
      resumed = true
      L.passes(3)
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      local w = a:last_waker()
      w()
      L.wait_until(function() return resumed end, "resume")
      local before = #a.calls
      w()
      assert(#a.calls == before, "stale waker called setwaker")
    end, "waker")
    cosock.run()
    assert.equal(1, #r[1])
    L.assert_clean()
  end)

  it("a stale waker does not wake the task's new, unrelated wait", function()
    local a, b = L.obj("a"), L.obj("b")
    local first, second
    local log = {}
    cosock.spawn(function()
      first = pack(L.yield({ a }, nil, 5))
      log[#log + 1] = "first"
      second = pack(L.yield({ b }, nil, 5))
      log[#log + 1] = "second"
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park on a")
      local stale = a:last_waker()
      stale()
      L.wait_until(function() return b:has_waker() end, "park on b")
      stale()
      L.passes(3)
      assert(#log == 1, "stale waker woke the new wait")
      b:fire()
    end, "waker")
    cosock.run()
    assert.same({ "first", "second" }, log)
    assert.same({ a }, first[1])
    assert.equal(1, #second[1])
    assert.is_true(rawequal(b, second[1][1]))
    assert.is_nil(second[3])
    L.assert_clean()
  end)

  it("a waker never called during its wait is stale once the wait ended another way", function()
    -- wait 1 on {a, b} ends through b; a's waker (never called) is kept and
    -- called during wait 2 on {c}: it must not end wait 2.
    local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
    local first, second
    local log = {}
    cosock.spawn(function()
      first = pack(L.yield({ a, b }, nil, 5))
      log[#log + 1] = "first"
      second = pack(L.yield({ c }, nil, 5))
      log[#log + 1] = "second"
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() and b:has_waker() end, "park on a, b")
      local kept = a:last_waker()
      b:fire()
      L.wait_until(function() return c:has_waker() end, "park on c")
      local before = #a.calls
      kept()
      L.passes(3)
      assert(#log == 1, "a stale waker woke the new wait")
      assert(#a.calls == before, "a stale waker called setwaker")
      c:fire()
    end, "waker")
    cosock.run()
    assert.same({ "first", "second" }, log)
    assert.same({ b }, first[1])
    assert.equal(1, #second[1])
    assert.is_true(rawequal(c, second[1][1]))
    L.assert_clean()
  end)

  it("a stale waker does not cut short the task's new timeout-only wait", function()
    local a = L.obj("a")
    local log = {}
    local waiter = cosock.spawn(function()
      L.yield({ a }, nil, 5)
      log[#log + 1] = "woken"
      -- waits for ever unless something wrongly wakes it; cancelled below
      L.yield(nil, nil, V.maxinteger)
      log[#log + 1] = "WRONG"
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      local stale = a:last_waker()
      stale()
      L.wait_until(function() return #log == 1 end, "first resume")
      stale()
      L.passes(3)
      waiter:cancel()
    end, "waker")
    cosock.run()
    assert.same({ "woken" }, log)
    L.assert_clean()
  end)

  it("a cancelled task is never resumed, even if a stale waker fires", function()
    local a = L.obj("a")
    local resumed = 0
    local waiter = cosock.spawn(function()
      L.yield({ a })
      resumed = resumed + 1
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      local w = a:last_waker()
      waiter:cancel()
      assert(a:last_call().kind == "recvr" and a:last_call().fn == nil,
        "cancel must clear the waker")
      w()
      L.passes(3)
    end, "canceller")
    cosock.run()
    assert.equal(0, resumed)
    assert.is_false(waiter:is_alive())
    L.assert_clean()
  end)

  it("a stale waker fired after cancel from outside run does not bring the task back", function()
    local a = L.obj("a")
    local resumed = 0
    local waiter = cosock.spawn(function()
      L.yield({ a })
      resumed = resumed + 1
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      waiter:cancel()
    end, "canceller")
    cosock.run()
    local w = a:last_waker()
    w()
    assert.equal(0, L.stats().ready)
    cosock.run()
    assert.equal(0, resumed)
    L.assert_clean()
  end)

  it("recvt and sendt may be maps (pairs order), not only lists", function()
    local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
    local r
    cosock.spawn(function()
      r = pack(L.yield({ x = a, y = b }, { [c] = c }, 5))
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() and b:has_waker() and c:has_waker("sendr") end, "park")
      b:fire("recvr")
      c:fire("sendr")
    end, "waker")
    cosock.run()
    assert.equal(1, #r[1])
    assert.is_true(rawequal(b, r[1][1]))
    assert.equal(1, #r[2])
    assert.is_true(rawequal(c, r[2][1]))
    assert.equal("recvr:function,recvr:nil", a:trace())
    assert.equal("sendr:function,sendr:nil,sendr:nil", c:trace())
    L.assert_clean()
  end)

  it("a waker called between runs makes the task ready for the next run", function()
    local a = L.obj("a")
    local r
    cosock.spawn(function() r = pack(L.yield({ a })) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      error("stop the run", 0)
    end, "stopper")
    local ok = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_nil(r)
    a:fire()
    cosock.run()
    assert.same({ a }, r[1])
    L.assert_clean()
  end)

  it("two tasks waiting on different objects are each woken by their own", function()
    local objs, got = {}, {}
    for i = 1, 20 do
      objs[i] = L.obj("o" .. i)
      cosock.spawn(function()
        local r = L.yield({ objs[i] }, nil, 5)
        got[i] = r and r[1]
      end, "w" .. i)
    end
    cosock.spawn(function()
      L.wait_until(function() return objs[20]:has_waker() end, "park")
      for i = 20, 1, -1 do objs[i]:fire() end
    end, "waker")
    cosock.run()
    for i = 1, 20 do
      assert.is_true(rawequal(objs[i], got[i]), "task " .. i)
    end
    L.assert_clean()
  end)
end)

describe("wakers across resets and re-entrant objects", function()
  before_each(function()
    cosock.reset()
  end)

  it("a waker from before reset does nothing, even when a new task waits", function()
    local a = L.obj("a")
    cosock.spawn(function() L.yield({ a }) end, "old")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      error("stop", 0)
    end, "stopper")
    assert.is_false(pcall(cosock.run))
    local old_waker = a:last_waker()
    cosock.reset()
    old_waker()
    assert.equal(0, L.stats().ready)
    local b = L.obj("b")
    local r, log = nil, {}
    cosock.spawn(function()
      r = compat.pack(L.yield({ b }, nil, 5))
      log[#log + 1] = "woken"
    end, "new")
    cosock.spawn(function()
      L.wait_until(function() return b:has_waker() end, "new park")
      old_waker()
      L.passes(3)
      assert(#log == 0, "old waker woke a new task")
      b:fire()
    end, "new-waker")
    cosock.run()
    assert.same({ b }, r[1])
    L.assert_clean()
  end)

  it("an object may spawn a task from inside setwaker", function()
    local ran = false
    local a = L.obj("a")
    local spawned = false
    a.setwaker = function(self, kind, fn)
      L.obj("x").setwaker(self, kind, fn)
      if fn and not spawned then
        spawned = true
        cosock.spawn(function()
          ran = true
          self:fire(kind)
        end, "from-setwaker")
      end
    end
    local r
    cosock.spawn(function() r = compat.pack(L.yield({ a }, nil, 5)) end, "waiter")
    cosock.run()
    assert.is_true(ran)
    assert.same({ a }, r[1])
    L.assert_clean()
  end)

  it("get_thread_metadata from inside setwaker does not break the loop", function()
    local info
    local a = L.obj("a", { ready = true })
    local orig = a.setwaker
    a.setwaker = function(self, kind, fn)
      if fn and not info then info = cosock.get_thread_metadata() end
      return orig(self, kind, fn)
    end
    local r
    cosock.spawn(function() r = compat.pack(L.yield({ a }, nil, 5)) end, "waiter")
    cosock.run()
    assert.is_table(info)
    assert.equal(1, #info)
    assert.same({ a }, r[1])
    L.assert_clean()
  end)

  it("run or reset from inside setwaker are refused and the loop stays usable", function()
    for _, f in ipairs({ cosock.run, cosock.reset }) do
      cosock.reset()
      local inner_ok, inner_err
      local a = L.obj("a", { ready = true })
      local orig = a.setwaker
      a.setwaker = function(self, kind, fn)
        if fn and inner_ok == nil then inner_ok, inner_err = pcall(f) end
        return orig(self, kind, fn)
      end
      local r
      cosock.spawn(function() r = compat.pack(L.yield({ a }, nil, 5)) end, "waiter")
      cosock.run()
      assert.is_false(inner_ok)
      assert.is_true(L.has(tostring(inner_err), "running"), tostring(inner_err))
      assert.same({ a }, r[1])
      L.assert_clean()
    end
  end)

  it("a setwaker that cancels the task being parked leaves the loop consistent", function()
    local h
    local a = L.obj("a")
    local orig = a.setwaker
    local cancel_ok, cancel_err
    a.setwaker = function(self, kind, fn)
      orig(self, kind, fn)
      if fn and cancel_ok == nil then cancel_ok, cancel_err = pcall(h.cancel, h) end
    end
    local resumed = false
    h = cosock.spawn(function()
      L.yield({ a }, nil, 0.01)
      resumed = true
    end, "victim")
    local ok, err = pcall(cosock.run)
    -- the cancel is refused (the loop is half way through parking that task),
    -- and the task then waits and times out as if nothing had happened
    assert.is_false(cancel_ok)
    assert.is_true(L.has(tostring(cancel_err), "cannot cancel a task while the loop is parking it"),
                   tostring(cancel_err))
    assert.is_true(ok, tostring(err))
    assert.is_true(resumed)
    assert.is_false(h:is_alive())
    cosock.reset()
    L.assert_loop_works()
  end)

  it("a waker that calls another task's waker from inside it works", function()
    local a, b = L.obj("a"), L.obj("b")
    -- when a is woken (its waker clears it), it also wakes b
    local orig = a.setwaker
    a.setwaker = function(self, kind, fn)
      orig(self, kind, fn)
      if fn == nil and b:has_waker() then b:fire() end
    end
    local ra, rb
    cosock.spawn(function() ra = compat.pack(L.yield({ a }, nil, 5)) end, "wa")
    cosock.spawn(function() rb = compat.pack(L.yield({ b }, nil, 5)) end, "wb")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() and b:has_waker() end, "park")
      a:fire()
    end, "waker")
    cosock.run()
    assert.same({ a }, ra[1])
    assert.same({ b }, rb[1])
    L.assert_clean()
  end)

  it("a recvt table changed by another task after parking does not confuse the loop", function()
    local a, b = L.obj("a"), L.obj("b")
    local recvt = { a }
    local r
    cosock.spawn(function() r = compat.pack(L.yield(recvt, nil, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      recvt[1] = b
      recvt[2] = a
      a:fire()
    end, "mutator")
    cosock.run()
    assert.same({ a }, r[1])
    assert.is_nil(a:last_call().fn)
    -- b was never given a waker by this wait
    for _, c in ipairs(b.calls) do assert.is_nil(c.fn) end
    L.assert_clean()
  end)

  it("objects need not be tables: a userdata with setwaker through its metatable", function()
    local socket = require "socket"
    local u = assert(socket.udp())
    local mt = getmetatable(u)
    local methods = mt.__index
    assert.is_table(methods)
    local calls, waker = {}, nil
    local saved = rawget(methods, "setwaker")
    methods.setwaker = function(_, kind, fn)
      calls[#calls + 1] = kind .. ":" .. type(fn)
      waker = fn
    end
    local ok, err = pcall(function()
      local r
      cosock.spawn(function() r = compat.pack(L.yield({ u }, nil, 5)) end, "waiter")
      cosock.spawn(function()
        L.wait_until(function() return waker ~= nil end, "park")
        waker()
      end, "waker")
      cosock.run()
      assert(r[1] and rawequal(r[1][1], u), "userdata object not woken")
    end)
    methods.setwaker = saved
    u:close()
    assert(ok, err)
    assert.same({ "recvr:function", "recvr:nil", "recvr:nil" }, calls)
    L.assert_clean()
  end)
end)
