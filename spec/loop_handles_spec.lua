-- Conformance: thread handles returned by cosock.spawn (name, tostring,
-- is_alive, cancel).

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

describe("thread handles", function()
  before_each(function()
    cosock.reset()
  end)

  describe("name and tostring", function()
    it("handle.name is the name given to spawn", function()
      local t = {}
      local hs = cosock.spawn(function() end, "named")
      local hn = cosock.spawn(function() end, 1)
      local ht = cosock.spawn(function() end, t)
      local hnil = cosock.spawn(function() end)
      assert.equal("named", hs.name)
      assert.equal(1, hn.name)
      assert.is_true(rawequal(t, ht.name))
      assert.is_nil(hnil.name)
      cosock.run()
      L.assert_clean()
    end)

    it("a string name is used as is", function()
      local h = cosock.spawn(function() end, "my task")
      assert.equal("my task", tostring(h))
      cosock.run()
      assert.equal("my task", tostring(h))
      L.assert_clean()
    end)

    it("a non-string name goes through tostring", function()
      local t = setmetatable({}, { __tostring = function() return "custom-name" end })
      local plain = {}
      local h1 = cosock.spawn(function() end, 1)
      local h2 = cosock.spawn(function() end, 2.5)
      local h3 = cosock.spawn(function() end, t)
      local h4 = cosock.spawn(function() end, plain)
      local h5 = cosock.spawn(function() end, true)
      assert.equal("1", tostring(h1))
      assert.equal(tostring(2.5), tostring(h2))
      assert.equal("custom-name", tostring(h3))
      assert.equal(tostring(plain), tostring(h4))
      assert.equal("true", tostring(h5))
      h1:cancel()
      assert.equal("1", tostring(h1))
      cosock.run()
      L.assert_clean()
    end)

    it("a nil name: 'thread:...' while alive, 'dead-thread' after cancel", function()
      local seen_parked
      local a = L.obj("a")
      local h = cosock.spawn(function() L.yield({ a }) end)
      assert.is_true(L.starts(tostring(h), "thread:"), tostring(h))
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        seen_parked = tostring(h)
        h:cancel()
      end, "canceller")
      cosock.run()
      assert.is_true(L.starts(seen_parked, "thread:"), seen_parked)
      assert.equal("dead-thread", tostring(h))
      L.assert_clean()
    end)

    -- cosock keeps the coroutine weakly: a finished task's handle shows the
    -- coroutine until the collector takes it, then 'dead-thread'.
    it("a nil name: the coroutine after the task finished, 'dead-thread' once it is collected", function()
      collectgarbage("stop") -- only the explicit collection below may take it
      finally(function() collectgarbage("restart") end)
      local h = cosock.spawn(function() L.pass() end)
      local co_name = tostring(h)
      assert.is_true(L.starts(co_name, "thread:"))
      cosock.run()
      assert.is_false(h:is_alive())
      assert.equal(co_name, tostring(h))
      collectgarbage(); collectgarbage()
      assert.equal("dead-thread", tostring(h))
      L.assert_clean()
    end)

    it("a nil name: 'dead-thread' after cancel from outside run", function()
      local h = cosock.spawn(function() end)
      h:cancel()
      assert.equal("dead-thread", tostring(h))
      cosock.run()
      L.assert_clean()
    end)
  end)

  describe("is_alive", function()
    it("is true before the first run, while parked and while running; false after finishing", function()
      local a = L.obj("a")
      local h
      local while_running, while_parked
      h = cosock.spawn(function()
        while_running = h:is_alive()
        L.yield({ a }, nil, 5)
      end, "t")
      assert.is_true(h:is_alive())
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        while_parked = h:is_alive()
        a:fire()
      end)
      cosock.run()
      assert.is_true(while_running)
      assert.is_true(while_parked)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("is false after cancel", function()
      local h = cosock.spawn(function() end)
      h:cancel()
      assert.is_false(h:is_alive())
      cosock.run()
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("is false after the task raised, and an unnamed handle reads 'dead-thread' once collected", function()
      local h = cosock.spawn(function() error("x", 0) end)
      assert.is_false(pcall(cosock.run))
      assert.is_false(h:is_alive())
      collectgarbage(); collectgarbage()
      assert.equal("dead-thread", tostring(h))
      assert.has_no.errors(function() h:cancel() end)
    end)

    it("is false after cosock.reset()", function()
      local h = cosock.spawn(function() end)
      cosock.reset()
      assert.is_false(h:is_alive())
      cosock.run()
      L.assert_clean()
    end)
  end)

  describe("cancel", function()
    it("a task cancelled before it ever ran never runs", function()
      local ran = false
      local h = cosock.spawn(function() ran = true end)
      h:cancel()
      assert.equal(0, L.stats().tasks)
      cosock.run()
      assert.is_false(ran)
      L.assert_clean()
    end)

    it("run returns when only cancelled tasks remained", function()
      local a = L.obj("a")
      local resumed = false
      local h = cosock.spawn(function()
        L.yield({ a }) -- no timeout, nothing will wake it
        resumed = true
      end, "forever")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        h:cancel()
      end, "canceller")
      cosock.run()
      assert.is_false(resumed)
      L.assert_clean()
    end)

    it("cancelling twice is a no-op", function()
      local h = cosock.spawn(function() end, "twice")
      h:cancel()
      assert.has_no.errors(function() h:cancel() end)
      assert.is_false(h:is_alive())
      local h2 = cosock.spawn(function() L.pass() end, "after")
      cosock.run()
      assert.has_no.errors(function() h2:cancel() end)
      assert.has_no.errors(function() h2:cancel() end)
      L.assert_clean()
    end)

    it("cancelling a finished task is a no-op", function()
      local h = cosock.spawn(function() end)
      cosock.run()
      assert.has_no.errors(function() h:cancel() end)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("a task cancelling itself raises 'Attempt to cancel a spawned task from itself'", function()
      local h
      local ok, err, alive_after, finished
      h = cosock.spawn(function()
        ok, err = pcall(h.cancel, h)
        alive_after = h:is_alive()
        L.pass()
        finished = true
      end, "self")
      cosock.run()
      assert.is_false(ok)
      assert.is_true(L.has(tostring(err), "Attempt to cancel a spawned task from itself"), tostring(err))
      assert.is_true(alive_after)
      assert.is_true(finished)
      L.assert_clean()
    end)

    it("an unprotected self-cancel comes out of run with a traceback", function()
      local h
      h = cosock.spawn(function() h:cancel() end, "self")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.has(err, "Attempt to cancel a spawned task from itself"), tostring(err))
      assert.is_true(L.has(err, "stack traceback:"), tostring(err))
    end)

    it("a task that is ready in the same pass is not resumed once cancelled", function()
      local a = L.obj("a")
      local resumed = false
      local h = cosock.spawn(function()
        L.yield({ a })
        resumed = true
      end, "victim")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        a:fire() -- victim is now ready
        h:cancel()
      end, "killer")
      cosock.run()
      assert.is_false(resumed)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("a task that is ready by timeout is not resumed once cancelled", function()
      -- victim re-arms a zero timeout every pass, so when killer runs victim is
      -- either already in this pass's ready set or parked with an expiring
      -- timer; after cancel it must not take another step.
      local steps = 0
      local at_cancel
      local h = cosock.spawn(function()
        while true do
          L.yield(nil, nil, 0)
          steps = steps + 1
        end
      end, "victim")
      cosock.spawn(function()
        L.passes(3)
        at_cancel = steps
        h:cancel()
        L.passes(3)
      end, "killer")
      cosock.run()
      assert.equal(at_cancel, steps)
      assert.is_false(h:is_alive())
      L.assert_clean()
    end)

    it("a task spawned and cancelled in the same pass never runs", function()
      local ran = false
      cosock.spawn(function()
        local h = cosock.spawn(function() ran = true end, "child")
        h:cancel()
      end, "parent")
      cosock.run()
      assert.is_false(ran)
      L.assert_clean()
    end)

    it("cancel calls setwaker(kind, nil) on every object the task waited on", function()
      local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
      local h = cosock.spawn(function() L.yield({ a, b }, { c }, 1000) end, "victim")
      local traces
      cosock.spawn(function()
        L.wait_until(function() return c:has_waker("sendr") end, "park")
        h:cancel()
        traces = { a:trace(), b:trace(), c:trace() }
      end, "killer")
      cosock.run()
      assert.same({
        "recvr:function,recvr:nil",
        "recvr:function,recvr:nil",
        "sendr:function,sendr:nil",
      }, traces)
      L.assert_clean()
    end)

    it("cancel raises the first setwaker error, whatever else it was given", function()
      local a = L.obj("a")
      local h = cosock.spawn(function() L.yield({ a }, nil, 1000) end, "victim")
      local err
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        a.opts.raise = "clearing failed 7741"
        err = select(2, pcall(h.cancel, h, "an extra argument"))
      end, "killer")
      cosock.run()
      assert.equal("clearing failed 7741", err)
      L.assert_clean()
    end)

    it("cancel from outside run clears wakers and drops the timer", function()
      local a = L.obj("a")
      local h = cosock.spawn(function() L.yield({ a }, nil, 1000) end, "victim")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        error("stop", 0)
      end, "stopper")
      assert.is_false(pcall(cosock.run))
      assert.equal(1, L.stats().timers)
      h:cancel()
      assert.equal("recvr:function,recvr:nil", a:trace())
      assert.equal(0, L.stats().timers)
      cosock.run()
      L.assert_clean()
    end)

    it("a cancelled task's coroutine is not resumed by a later run", function()
      local steps = 0
      local h = cosock.spawn(function()
        while true do
          steps = steps + 1
          L.pass()
        end
      end, "looper")
      cosock.spawn(function()
        L.passes(3)
        h:cancel()
      end, "killer")
      cosock.run()
      local at_cancel = steps
      cosock.run()
      assert.equal(at_cancel, steps)
      L.assert_clean()
    end)
  end)
end)

describe("thread handles across task slots and resets", function()
  before_each(function()
    cosock.reset()
  end)

  it("a finished task's handle does not control a later task", function()
    local old = cosock.spawn(function() end, "old")
    cosock.run()
    local ran = {}
    local news = {}
    for i = 1, 5 do
      news[i] = cosock.spawn(function() L.pass(); ran[i] = true end, "new" .. i)
    end
    old:cancel()
    assert.is_false(old:is_alive())
    assert.equal("old", tostring(old))
    assert.equal("old", old.name)
    for i = 1, 5 do assert.is_true(news[i]:is_alive()) end
    cosock.run()
    for i = 1, 5 do assert.is_true(ran[i], "task " .. i) end
    L.assert_clean()
  end)

  it("an unnamed finished task's handle is not taken for the task that reuses its slot", function()
    collectgarbage("stop") -- the old coroutine stays until the explicit collection
    finally(function() collectgarbage("restart") end)
    local old = cosock.spawn(function() end)
    local old_name = tostring(old)
    cosock.run()
    local new = cosock.spawn(function() end)
    assert.are_not.equal(old_name, tostring(new))
    assert.equal(old_name, tostring(old))
    collectgarbage(); collectgarbage()
    assert.equal("dead-thread", tostring(old))
    assert.is_false(old:is_alive())
    assert.is_true(new:is_alive())
    cosock.run()
    L.assert_clean()
  end)

  it("a handle from before reset does not control tasks spawned after it", function()
    local old = cosock.spawn(function() error("must not run") end, "old")
    cosock.reset()
    local ran = false
    local new = cosock.spawn(function() ran = true end, "new")
    assert.is_false(old:is_alive())
    assert.has_no.errors(function() old:cancel() end)
    assert.is_true(new:is_alive())
    cosock.run()
    assert.is_true(ran)
    L.assert_clean()
  end)

  it("a setwaker that cancels the task again while it is being cancelled: freed once", function()
    local h, nested
    local a = L.obj("a")
    local orig = a.setwaker
    a.setwaker = function(self, kind, fn)
      orig(self, kind, fn)
      if fn == nil and nested == nil then nested = compat.pack(pcall(h.cancel, h)) end
    end
    h = cosock.spawn(function() L.yield({ a }, nil, 5) end, "victim")
    cosock.spawn(function() L.pass(); h:cancel() end, "canceller")
    cosock.run()
    assert.same({ true, n = 1 }, nested) -- the inner cancel has nothing left to do
    assert.equal("recvr:function,recvr:nil", a:trace()) -- and took no waker back again
    assert.is_false(h:is_alive())
    L.assert_clean()
    -- its slot is free once: two new tasks get two slots and both run
    local ran = {}
    local h1 = cosock.spawn(function() L.pass(); ran[#ran + 1] = 1 end, "one")
    local h2 = cosock.spawn(function() L.pass(); ran[#ran + 1] = 2 end, "two")
    assert.is_true(h1:is_alive() and h2:is_alive())
    cosock.run()
    assert.same({ 1, 2 }, ran)
    L.assert_clean()
  end)

  it("handles keep to their own loop when the module is loaded a second time", function()
    local saved = {}
    for k, v in pairs(package.loaded) do
      if k == "cosock" or k:match("^cosock%.") then saved[k] = v end
    end
    finally(function()
      for k in pairs(package.loaded) do
        if k == "cosock" or k:match("^cosock%.") then package.loaded[k] = nil end
      end
      for k, v in pairs(saved) do package.loaded[k] = v end
    end)
    local old = cosock.spawn(function() end, "old")  -- in the loop the specs use
    for k in pairs(saved) do package.loaded[k] = nil end
    local cosock2 = require "cosock"                 -- a second, separate loop
    assert.is_false(rawequal(cosock2, cosock))
    local ran = false
    local new = cosock2.spawn(function() ran = true end, "new") -- the same slot
    old:cancel()                                     -- must not touch the new loop's task
    assert.is_true(new:is_alive())
    assert.is_false(old:is_alive())
    cosock2.run()
    assert.is_true(ran)
  end)

  it("a cancelled task's handle does not control the task that takes its slot", function()
    local a = L.obj("a")
    local victim = cosock.spawn(function() L.yield({ a }) end, "victim")
    local r
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      victim:cancel()
      local b = L.obj("b")
      cosock.spawn(function() r = compat.pack(L.yield({ b }, nil, 5)) end, "successor")
      L.wait_until(function() return b:has_waker() end, "successor park")
      victim:cancel() -- must be a no-op
      b:fire()
    end, "killer")
    cosock.run()
    assert.is_not_nil(r)
    assert.equal(1, #r[1])
    L.assert_clean()
  end)

  it("handles survive garbage collection of everything else", function()
    local hs = {}
    for i = 1, 50 do
      hs[i] = cosock.spawn(function() L.pass() end, i % 2 == 0 and ("n" .. i) or nil)
    end
    collectgarbage()
    collectgarbage()
    cosock.run()
    collectgarbage()
    for i = 1, 50 do
      assert.is_false(hs[i]:is_alive())
      if i % 2 == 0 then
        assert.equal("n" .. i, tostring(hs[i]))
      else
        assert.equal("dead-thread", tostring(hs[i]))
      end
    end
    L.assert_clean()
  end)
end)

-- cosock's handle is a plain table {name = name} whose metatable is also its
-- method table; programs store their own fields on it and read it with pairs.
describe("thread handles are plain tables", function()
  before_each(function()
    cosock.reset()
  end)

  it("is a table holding only its name, with cosock's metatable shape", function()
    local h = cosock.spawn(function() end, "named")
    local hnil = cosock.spawn(function() end)
    assert.equal("table", type(h))
    local keys = {}
    for k, v in pairs(h) do keys[#keys + 1] = tostring(k) .. "=" .. tostring(v) end
    assert.same({ "name=named" }, keys)
    assert.is_nil(next(hnil))
    local mt = getmetatable(h)
    assert.is_true(rawequal(mt, getmetatable(hnil)))
    assert.is_true(rawequal(mt, mt.__index))
    assert.is_true(rawequal(h.cancel, mt.cancel))
    assert.is_true(rawequal(h.is_alive, mt.is_alive))
    assert.equal("function", type(mt.__tostring))
    cosock.run()
    L.assert_clean()
  end)

  it("keeps a program's own fields, and its methods still work", function()
    local ran = false
    local h = cosock.spawn(function() ran = true end, "t")
    h.restarts, h[1] = 3, "first"
    assert.equal(3, h.restarts)
    assert.equal("first", h[1])
    assert.is_true(h:is_alive())
    cosock.run()
    assert.is_true(ran)
    assert.is_false(h:is_alive())
    assert.equal(3, h.restarts)
    L.assert_clean()
  end)

  it("tostring reads handle.name as it is now", function()
    local h = cosock.spawn(function() end, "before")
    h.name = "after"
    assert.equal("after", tostring(h))
    h.name = 12
    assert.equal("12", tostring(h))
    cosock.run()
    L.assert_clean()
  end)

  it("a false name is not a name: tostring gives the coroutine", function()
    local h = cosock.spawn(function() end, false)
    assert.is_false(h.name)
    assert.is_true(L.starts(tostring(h), "thread:"), tostring(h))
    cosock.run()
    L.assert_clean()
  end)

  it("a handle the program drops is collected; its task still runs to the end", function()
    local steps = 0
    cosock.spawn(function()
      for _ = 1, 3 do steps = steps + 1; cosock.socket.sleep(0) end
    end, "dropped")
    collectgarbage(); collectgarbage()
    cosock.run()
    assert.equal(3, steps)
    L.assert_clean()
  end)

  it("a cancelled unnamed handle reads 'dead-thread' at once", function()
    collectgarbage("stop")
    finally(function() collectgarbage("restart") end)
    local h = cosock.spawn(function() cosock.socket.sleep(1) end)
    cosock.spawn(function() cosock.socket.sleep(0); h:cancel() end, "canceller")
    cosock.run()
    assert.equal("dead-thread", tostring(h))
    L.assert_clean()
  end)

  it("cancel from the task itself raises with cosock.lua's position, as cosock's does", function()
    local err
    local me
    me = cosock.spawn(function() err = select(2, pcall(me.cancel, me)) end, "self")
    cosock.run()
    assert.matches("^[^\n]-cosock%.lua:%d+: Attempt to cancel a spawned task from itself$", err)
    L.assert_clean()
  end)

  it("a value that is not one of its handles reads as a dead task, as in cosock", function()
    local ran = false
    local h = cosock.spawn(function() ran = true end, "t")
    local mt = getmetatable(h)
    assert.is_false(mt.is_alive({ name = "t" }))
    assert.is_false(mt.is_alive(42))
    assert.is_false(mt.is_alive())
    assert.has_no.errors(function() mt.cancel(42); mt.cancel({}) end)
    assert.equal("dead-thread", tostring(setmetatable({}, mt)))
    assert.is_true(h:is_alive())              -- none of that touched the real task
    cosock.run()
    assert.is_true(ran)
    L.assert_clean()
  end)
end)
