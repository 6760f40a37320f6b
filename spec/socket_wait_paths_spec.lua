-- The two ways a wrapper's call waits. In a task's own coroutine the loop
-- parks the task on the wrapper directly (cn_prepark); anywhere else (a
-- coroutine of the task's own whose yields it forwards to the loop) the call
-- yields the usual ({self}, nil, timeout) tuple. Both must give the same
-- results, and a call that cannot yield must fail cleanly.

local cosock = require "cosock"
local net = require "spec.support.net"
local V = require "spec.support.version"
local L = require "spec.support.loop"

local pack = net.pack

local forwarding = net.forwarding

describe("wrapper waits", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a receive inside a forwarding coroutine yields the tuple and gets its data", function()
    local got, yielded, c
    local log = {}
    cosock.spawn(function()
      local s
      c, s = net.pair()
      cosock.spawn(function()
        cosock.socket.sleep(0.01)
        assert(s:send("hello\nworld\n"))
      end, "sender")
      got = pack(net.forwarding_logged(log, function()
        local first = pack(coroutine.yield(nil, nil, 0)) -- what a forwarded yield gets back
        yielded = first.n
        return c:receive(), c:receive()
      end))
      c:close(); s:close()
    end, "receiver")
    net.run()
    assert.equal(3, yielded)
    assert.same({ "hello", "world", n = 2 }, got)
    -- log[1] is the test's own yield; then the receive's wait, as cosock's
    -- wrappers yield it: ({c}, {}, its timeout)
    local wait = log[2]
    assert.equal(3, wait.n)
    assert.same({ c }, wait[1])
    assert.same({}, wait[2])
    assert.equal(net.TIMEOUT, wait[3])
  end)

  it("a timeout inside a forwarding coroutine gives LuaSocket's values", function()
    local got
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(0.02)
      assert(s:send("part"))
      got = pack(forwarding(function() return c:receive() end))
      c:close(); s:close()
    end, "receiver")
    net.run()
    assert.same({ nil, "timeout", "part", n = 3 }, got)
  end)

  it("a send inside a forwarding coroutine waits for room and sends everything", function()
    local data = net.pattern(4 * 1024 * 1024)
    local sent, got
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function() got = s:receive(#data); s:close() end, "reader")
      sent = forwarding(function() return c:send(data) end)
      c:close()
    end, "writer")
    net.run()
    assert.equal(#data, sent)
    assert.is_true(got == data)
  end)

  it("a receive inside pcall in a task waits like any other", function()
    local got
    if V.puc51 then
      -- PUC 5.1: no task can wait inside pcall there: the receive's wait
      -- fails at once with Lua's error, which the pcall catches
      cosock.spawn(function()
        local c, s = net.pair()
        got = pack(pcall(c.receive, c))
        c:close(); s:close()
      end, "receiver")
      net.run()
      assert.is_false(got[1])
      assert.truthy(L.has(tostring(got[2]), V.YIELD_ACROSS), tostring(got[2]))
      L.assert_clean()
      L.assert_loop_works()
      return
    end
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function()
        cosock.socket.sleep(0.01)
        assert(s:send("late\n"))
      end, "sender")
      got = pack(pcall(c.receive, c))
      c:close(); s:close()
    end, "receiver")
    net.run()
    assert.same({ true, "late", n = 2 }, got)
  end)

  it("a call that would wait where nothing can yield raises, and the loop runs again", function()
    cosock.spawn(function()
      local c, s = net.pair()
      -- gsub calls back from C without a continuation: no yield possible
      local ok, err = pcall(string.gsub, "x", "x", function() return c:receive() end)
      c:close(); s:close()
      assert(not ok)
      error(err, 0)
    end, "stuck")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.has.match(V.YIELD_ACROSS, err, 1, true) -- (Lua's own message)
    cosock.reset()
    local line
    cosock.spawn(function()
      local c, s = net.pair()
      assert(s:send("again\n"))
      line = c:receive()
      c:close(); s:close()
    end, "after")
    net.run()
    assert.equal("again", line)
  end)

  it("the shared wait on a table that is not one of the wrappers goes through the protocol", function()
    local wrap = require "cosock.socket.wrap"
    local sock = require("socket").tcp()
    cosock.spawn(function()
      wrap.wait({ inner_sock = sock }, "recvr", nil) -- no setwaker: cannot be waited on
    end, "odd")
    local ok, err = pcall(cosock.run)
    sock:close()
    assert.is_false(ok)
    assert.has.match("non%-wakeable socket\n%(task 'odd' yielded a table without setwaker in its recvt%)$", err)
  end)

  it("a nonsense cached fd in a wrapper is not trusted: the wait still works", function()
    local got, recached = {}, {}
    cosock.spawn(function()
      local c, s = net.pair()
      -- The loop's fd cache: the one negative integer key of a wrapper that
      -- has waited once. A program can reach it with next(), so it may hold
      -- anything.
      cosock.spawn(function() cosock.socket.sleep(0); assert(s:send("x\n")) end, "sender")
      assert.equal("x", c:receive())
      local key
      for k in pairs(c) do if type(k) == "number" and k < 0 then key = k end end
      assert.is_not_nil(key)
      for _, bad in ipairs { -1, 2 ^ 40, 0.5, "3" } do
        c[key] = bad
        cosock.spawn(function() cosock.socket.sleep(0); assert(s:send("x\n")) end, "sender")
        got[#got + 1] = c:receive()
        -- the wait asked the socket for its fd and cached that instead
        recached[#recached + 1] = c[key] == c.inner_sock:getfd()
      end
      c:close(); s:close()
    end, "receiver")
    net.run()
    assert.same({ "x", "x", "x", "x" }, got)
    assert.same({ true, true, true, true }, recached)
  end)

  it("cancelling a task that waits in receive frees the socket for another task", function()
    local got, first_alive
    cosock.spawn(function()
      local c, s = net.pair()
      local first = cosock.spawn(function() c:receive() end, "first")
      cosock.socket.sleep(0) -- first is parked on c now
      first:cancel()
      first_alive = first:is_alive()
      cosock.spawn(function() got = c:receive() end, "second")
      cosock.socket.sleep(0)
      assert(s:send("for the second\n"))
      cosock.socket.sleep(0.01)
      c:close(); s:close()
    end, "setup")
    net.run()
    assert.is_false(first_alive)
    assert.equal("for the second", got)
  end)

  it("_wake on a wrapper a task waits on wakes that task; on another wrapper it does nothing", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      -- a second wrapper over the same LuaSocket object: same fd, other wrapper
      local other = cosock.socket.tcp._from_inner(c.inner_sock)
      cosock.spawn(function()
        r.got = pack(c:receive())
      end, "receiver")
      cosock.spawn(function()
        cosock.socket.sleep(0) -- the receiver parks first
        r.other = other:_wake("recvr")
        r.wrong_kind = c:_wake("sendr")
        r.first = c:_wake("recvr")  -- it retries, finds nothing, waits again
        cosock.socket.sleep(0)
        r.second = c:_wake("recvr")
        cosock.socket.sleep(0)
        assert(s:send("data\n"))
        cosock.socket.sleep(0.01)
        c:close(); s:close()
      end, "waker")
    end, "setup")
    net.run()
    assert.is_false(r.other)
    assert.is_false(r.wrong_kind)
    assert.is_true(r.first)
    assert.is_true(r.second)
    assert.same({ "data", n = 1 }, r.got)
  end)
end)
