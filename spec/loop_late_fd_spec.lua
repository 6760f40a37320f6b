-- The descriptor rule: an object whose getfd() is -1 when a task starts
-- waiting on it (a udp socket before its first sendto, a tcp socket before
-- connect, any object of the waker protocol) is asked again after each pass,
-- as cosock 0.2.0's select reads getfd() on every pass. Run with both
-- pollers (test/run-specs-epoll).

local cosock = require "cosock"
local net = require "spec.support.net"
local rawsocket = require "socket"

local socket = cosock.socket
local LIMIT = 2 -- the waits' bound: only reached when the rule is broken

-- A raw udp peer on 127.0.0.1 that answers each datagram with "pong".
local function peer()
  local p = assert(rawsocket.udp())
  assert(p:setsockname("127.0.0.1", 0))
  p:settimeout(0)
  local ip, port = p:getsockname()
  return p, ip, tonumber(port)
end

describe("a wait on an object with no descriptor yet", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a udp socket that gets its fd from another task's sendto wakes the task in select", function()
    local p, ip, port = peer()
    local u = assert(socket.udp())
    local r = {}
    cosock.spawn(function()
      assert.equal(-1, u:getfd()) -- (LuaSocket makes it at the first sendto)
      local ready, _, err = socket.select({ u }, nil, LIMIT)
      r.err = err
      r.ready = ready and ready[1] == u
      r.data = u:receive()
    end, "waiter")
    cosock.spawn(function()
      assert(u:sendto("ping", ip, port))
      p:settimeout(LIMIT)
      local d, fip, fport = p:receivefrom()
      assert.equal("ping", d)
      p:sendto("pong", fip, fport)
    end, "sender")
    net.run()
    p:close()
    u:close()
    assert.same({ ready = true, data = "pong" }, r)
  end)

  it("a tcp socket that another task connects wakes the task in select", function()
    local srv, port = net.listen()
    local t = assert(socket.tcp())
    local r = {}
    cosock.spawn(function()
      assert.equal(-1, t:getfd())
      local ready, _, err = socket.select({ t }, nil, LIMIT)
      r.err = err
      r.ready = ready and ready[1] == t
      r.line = t:receive()
    end, "waiter")
    cosock.spawn(function()
      local c = assert(srv:accept())
      c:send("hi\n")
      c:close()
    end, "server")
    cosock.spawn(function() assert(t:connect("127.0.0.1", port)) end, "connector")
    net.run()
    srv:close()
    t:close()
    assert.same({ ready = true, line = "hi" }, r)
  end)

  it("an object of the waker protocol whose getfd() says -1, then a real fd, is polled", function()
    local p, ip, port = peer()
    local real = assert(rawsocket.udp())
    assert(real:setsockname("127.0.0.1", 0))
    local rip, rport = real:getsockname()
    local inner = { fd = -1 }
    function inner.getfd(self) return self.fd end
    local obj = { inner_sock = inner, woken = {} }
    function obj.setwaker(self, kind, fn) self[kind] = fn end
    function obj._wake(self, kind)
      self.woken[#self.woken + 1] = kind
      local fn = self[kind]
      self[kind] = nil
      if fn then fn() end
    end
    local r = {}
    cosock.spawn(function()
      local ready, _, err = socket.select({ obj }, nil, LIMIT)
      r.err = err
      r.ready = ready and ready[1] == obj
    end, "waiter")
    cosock.spawn(function()
      inner.fd = real:getfd()
      assert(p:sendto("x", rip, tonumber(rport)))
    end, "giver")
    net.run()
    p:close()
    real:close()
    assert.same({ ready = true }, r)
    assert.same({ "recvr" }, obj.woken)
    local _ = ip, port
  end)

  it("a wait with a timeout on a socket that never gets an fd ends at its timeout, polling, not spinning", function()
    local u = assert(socket.udp())
    local r, passes
    cosock.spawn(function()
      local before = cosock.stats().passes
      r = { socket.select({ u }, nil, 0.02) }
      passes = cosock.stats().passes - before
    end, "waiter")
    net.run()
    u:close()
    assert.same({ nil, nil, "timeout" }, r)
    assert.is_true(passes <= 3, "passes: " .. passes) -- one to park, one after the timeout
  end)

  it("a wait without timeout on it neither raises the stall nor spins: the step sleeps its cap; code outside the loop gives the fd", function()
    local p, ip, port = peer()
    local u = assert(socket.udp())
    local r
    cosock.spawn(function()
      local ready = socket.select({ u }, nil)
      r = ready and ready[1] == u and u:receive()
    end, "waiter")
    assert.is_true(cosock.step(0))          -- parked, no fd
    local before = cosock.stats().passes
    assert.is_true(cosock.step(0.001))      -- (no stall error: cosock's select blocks there)
    assert.equal(before + 1, cosock.stats().passes)
    assert(u:sendto("ping", ip, port))      -- outside the loop: the socket is made
    p:settimeout(LIMIT)
    local d, fip, fport = p:receivefrom()
    assert.equal("ping", d)
    p:sendto("pong", fip, fport)
    for _ = 1, 10 do
      if not cosock.step(LIMIT / 10) then break end
    end
    p:close()
    u:close()
    assert.equal("pong", r)
    net.assert_clean()
  end)

  it("with set_close_wakes(true) a socket with no fd yet is not taken for a closed one", function()
    cosock.set_close_wakes(true)
    local u = assert(socket.udp())
    local r
    cosock.spawn(function() r = { socket.select({ u }, nil, 0.01) } end, "waiter")
    local ok, err = pcall(net.run)
    cosock.set_close_wakes(false)
    u:close()
    assert(ok, err)
    assert.same({ nil, nil, "timeout" }, r)
  end)

  it("with set_close_wakes(true) and nothing else that could give it an fd, run raises the stall", function()
    cosock.set_close_wakes(true)
    local u = assert(socket.udp())
    cosock.spawn(function() socket.select({ u }, nil) end, "waiter")
    local ok, err = pcall(cosock.run)
    cosock.set_close_wakes(false)
    u:close()
    cosock.reset()
    assert.is_false(ok)
    assert.matches("cosock tried to call socket.select with no sockets and no timeout", tostring(err), 1, true)
  end)

  it("a wait on a closed wrapper is still not polled (cosock's select skips it until the timeout)", function()
    local u = assert(socket.udp())
    assert(u:setsockname("127.0.0.1", 0))
    u:close()
    local r
    cosock.spawn(function() r = { socket.select({ u }, nil, 0.01) } end, "waiter")
    net.run()
    assert.same({ nil, nil, "timeout" }, r)
  end)

  it("an error of a getfd() asked again comes out of run and drops the task, as at park time; the loop goes on", function()
    local inner, calls = {}, 0
    function inner.getfd()
      calls = calls + 1
      if calls > 1 then error("getfd broke") end
      return -1
    end
    local obj = { inner_sock = inner }
    function obj.setwaker(self, kind, fn) self[kind] = fn end
    function obj._wake() end
    local h = cosock.spawn(function() socket.select({ obj }, nil, 10) end, "waiter")
    cosock.spawn(function() end, "another") -- (a pass after the wait: getfd is asked again)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.matches("getfd broke", tostring(err), 1, true)
    assert.is_false(h:is_alive())
    assert.is_nil(obj.recvr) -- its waker was taken back
    net.run()
    assert.equal(2, calls)
  end)

  it("a getfd() asked again that cancels its own task is refused; one that cancels another task works", function()
    local inner, calls, other, errs = {}, 0, nil, {}
    local obj = { inner_sock = inner }
    local h
    function inner.getfd()
      calls = calls + 1
      if calls == 2 then
        local ok, err = pcall(h.cancel, h)
        errs[#errs + 1] = ok or err
        other:cancel()
      end
      return -1
    end
    function obj.setwaker(self, kind, fn) self[kind] = fn end
    function obj._wake() end
    h = cosock.spawn(function() socket.select({ obj }, nil, 0.01) end, "waiter")
    other = cosock.spawn(function() socket.sleep(10) end, "other")
    net.run()
    assert.equal(1, #errs)
    assert.matches("cannot cancel a task while the loop is parking it", tostring(errs[1]), 1, true)
    assert.is_false(other:is_alive())
    assert.is_true(calls >= 2)
  end)
end)
