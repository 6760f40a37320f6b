-- Conformance: what handle:cancel() does to the cancelled task's coroutine.
-- On Lua 5.4 it closes it, as coroutine.close does: the task's pending
-- to-be-closed variables run. Lua 5.3 has no such variables: there cancel
-- leaves the coroutine suspended and runs none of it, and the part below for
-- the other versions (5.1, 5.2, 5.3, LuaJIT) checks that instead (the file
-- says which part ran on stderr).

local cosock = require "cosock"
local L = require "spec.support.loop"
local net = require "spec.support.net"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local version = tonumber(_VERSION:match("%d+%.%d+"))
local closes = version >= 5.4

io.stderr:write(("loop_cancel_close_spec: %s: %s\n"):format(_VERSION, closes
  and "checking that cancel closes the coroutine (to-be-closed variables run)"
  or "no to-be-closed variables; checking that cancel leaves the coroutine suspended instead"))

-- A task body in Lua 5.4 syntax (loaded at run time, so that this file still
-- compiles on 5.3). Its arguments arrive as `...`.
local function body(src)
  return assert(load(src, "=task", "t", _ENV))
end

-- A guard is a to-be-closed value: its __close appends "<label>" (or
-- "<label>:<err>" when closed by an error) to log and then calls then_(),
-- when given.
local GUARDS = [[
local log = ...
local function guard(label, then_)
  return setmetatable({}, { __close = function(_, err)
    log[#log + 1] = err == nil and label or (label .. ":" .. tostring(err))
    if then_ then then_() end
  end })
end
]]

if closes then
  describe("cancel on Lua " .. version .. " closes the coroutine", function()
    before_each(function()
      cosock.reset()
    end)

    it("its pending to-be-closed variables run, newest first, before cancel returns", function()
      local log, co = {}, nil
      local a = L.obj("a")
      local task = body(GUARDS .. [[
        local a, set_co = select(2, ...)
        set_co(coroutine.running())
        local first <close> = guard("first")
        local second <close> = guard("second")
        coroutine.yield({ a })
        log[#log + 1] = "resumed"
      ]])
      local h = cosock.spawn(function() task(log, a, function(c) co = c end) end, "guarded")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        h:cancel()
        log[#log + 1] = "cancel returned"
      end, "canceller")
      cosock.run()
      assert.same({ "second", "first", "cancel returned" }, log)
      assert.equal("dead", coroutine.status(co))
      assert.equal("recvr:function,recvr:nil", a:trace())
      L.assert_clean()
    end)

    it("the task is gone when they run: not alive, its wakers taken back, a second cancel does nothing", function()
      local log, seen = {}, {}
      local a = L.obj("a")
      local h
      local task = body(GUARDS .. [[
        local a, check = select(2, ...)
        local g <close> = guard("g", check)
        coroutine.yield({ a })
      ]])
      h = cosock.spawn(function()
        task(log, a, function()
          seen.alive = h:is_alive()
          seen.trace = a:trace()
          seen.stats = L.stats().tasks
          h:cancel()
        end)
      end, "guarded")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        h:cancel()
      end, "canceller")
      cosock.run()
      assert.same({ "g" }, log)
      assert.is_false(seen.alive)
      assert.equal("recvr:function,recvr:nil", seen.trace)
      assert.equal(1, seen.stats) -- the canceller only
      L.assert_clean()
    end)

    it("a task parked in a socket receive: its __close closes the socket, nothing is left", function()
      local log, got = {}, nil
      local task = body(GUARDS .. [[
        local c = select(2, ...)
        local g <close> = guard("socket", function() c:close() end)
        c:receive()
        log[#log + 1] = "received"
      ]])
      cosock.spawn(function()
        local c, s = net.pair()
        local h = cosock.spawn(function() task(log, c) end, "reader")
        cosock.socket.sleep(0.01)
        assert.equal(1, net.stats().fds) -- the reader waits on c's fd
        h:cancel()
        got = compat.pack(s:receive())   -- the peer sees the close
        s:close()
      end, "owner")
      net.run()
      assert.same({ "socket" }, log)
      assert.same({ nil, "closed", "" }, { got[1], got[2], got[3] })
      L.assert_clean()
    end)

    it("an error from a __close comes out of cancel after the task is gone; older variables still close", function()
      local log, err = {}, nil
      local a = L.obj("a")
      local task = body(GUARDS .. [[
        local a = select(2, ...)
        local older <close> = guard("older")
        local failing <close> = guard("failing", function() error("close failed", 0) end)
        coroutine.yield({ a })
      ]])
      local h = cosock.spawn(function() task(log, a) end, "guarded")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        err = net.error_of(function() h:cancel() end)
      end, "canceller")
      cosock.run()
      assert.equal("close failed", err)
      assert.same({ "failing", "older:close failed" }, log)
      assert.is_false(h:is_alive())
      L.assert_clean()
      L.assert_loop_works()
    end)

    it("a __close cannot wait: its yield fails, and that error comes out of cancel", function()
      local log, err = {}, nil
      local a = L.obj("a")
      local task = body(GUARDS .. [[
        local a, sleep = select(2, ...)
        local g <close> = guard("g", function() sleep(0) end)
        coroutine.yield({ a })
      ]])
      local h = cosock.spawn(function() task(log, a, cosock.socket.sleep) end, "guarded")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        err = net.error_of(function() h:cancel() end)
      end, "canceller")
      cosock.run()
      assert.same({ "g" }, log)
      assert.matches("attempt to yield across a C%-call boundary", err)
      L.assert_clean()
      L.assert_loop_works()
    end)

    it("cancel from outside run (after run raised) closes the parked task too", function()
      local log = {}
      local a = L.obj("a")
      local task = body(GUARDS .. [[
        local a = select(2, ...)
        local g <close> = guard("g")
        coroutine.yield({ a })
      ]])
      local h = cosock.spawn(function() task(log, a) end, "guarded")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        error("stop", 0)
      end, "failing")
      assert.has_error(cosock.run)
      assert.same({}, log)
      h:cancel()
      assert.same({ "g" }, log)
      L.assert_clean()
    end)
  end)
else
  describe("cancel on Lua " .. version .. " (no to-be-closed variables)", function()
    before_each(function()
      cosock.reset()
    end)

    it("drops the coroutine without running any of it: it stays suspended", function()
      local log, co = {}, nil
      local a = L.obj("a")
      local h = cosock.spawn(function()
        co = coroutine.running()
        if V.puc51 then
          -- (PUC 5.1 cannot yield inside pcall: a plain yield, which nothing
          -- can unwind there anyway)
          coroutine.yield({ a })
          log[#log + 1] = "resumed"
        else
          local ok = pcall(coroutine.yield, { a })
          log[#log + 1] = ok and "resumed" or "unwound"
        end
      end, "parked")
      cosock.spawn(function()
        L.wait_until(function() return a:has_waker() end, "park")
        h:cancel()
      end, "canceller")
      cosock.run()
      assert.same({}, log)
      assert.equal("suspended", coroutine.status(co))
      assert.equal("recvr:function,recvr:nil", a:trace())
      L.assert_clean()
    end)
  end)
end
