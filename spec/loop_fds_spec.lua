-- Conformance: objects with an inner_sock are polled by the loop, which calls
-- obj:_wake(kind) when the fd is ready. Raw LuaSocket objects on 127.0.0.1;
-- every wait has a timeout so that a missed wake fails instead of hanging.

local cosock = require "cosock"
local socket = require "socket"
local L = require "spec.support.loop"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local function pack(...) return compat.pack(...) end

describe("fd polling", function()
  local to_close

  before_each(function()
    cosock.reset()
    to_close = {}
  end)

  after_each(function()
    for _, s in ipairs(to_close) do s:close() end
  end)

  local function pair()
    local a, b = L.tcp_pair()
    to_close[#to_close + 1] = a
    to_close[#to_close + 1] = b
    return a, b
  end

  it("a readable fd: the loop calls _wake('recvr') and the task gets ({wrapper}, nil, nil)", function()
    local a, b = pair()
    local w = L.wrap(b, "b")
    local r, data, fds_while_parked
    cosock.spawn(function()
      r = pack(L.yield({ w }, nil, 5))
      data = b:receive(5)
    end, "reader")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker("recvr") end, "park")
      fds_while_parked = L.stats().fds
      assert(a:send("hello"))
    end, "sender")
    cosock.run()
    assert.equal(3, r.n)
    assert.is_not_nil(r[1], "timed out instead of being woken")
    assert.equal(1, #r[1])
    assert.is_true(rawequal(w, r[1][1]))
    assert.is_nil(r[2])
    assert.is_nil(r[3])
    assert.equal("hello", data)
    assert.equal(1, fds_while_parked)
    assert.is_true(#w.wakes >= 1)
    for _, k in ipairs(w.wakes) do assert.equal("recvr", k) end
    L.assert_clean()
  end)

  it("data already waiting when the task parks wakes it", function()
    local a, b = pair()
    assert(a:send("x"))
    local w = L.wrap(b, "b")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, nil, 5)) end, "reader")
    cosock.run()
    assert.is_not_nil(r[1], "timed out instead of being woken")
    assert.is_true(rawequal(w, r[1][1]))
    assert.is_nil(r[3])
    assert.equal("recvr", w.wakes[1])
    L.assert_clean()
  end)

  it("a writable fd: the loop calls _wake('sendr') and the task gets (nil, {wrapper}, nil)", function()
    local a = pair()
    local w = L.wrap(a, "a")
    local r
    cosock.spawn(function() r = pack(L.yield(nil, { w }, 5)) end, "writer")
    cosock.run()
    assert.equal(3, r.n)
    assert.is_nil(r[1])
    assert.is_not_nil(r[2], "timed out instead of being woken")
    assert.equal(1, #r[2])
    assert.is_true(rawequal(w, r[2][1]))
    assert.is_nil(r[3])
    assert.is_true(#w.wakes >= 1)
    for _, k in ipairs(w.wakes) do assert.equal("sendr", k) end
    L.assert_clean()
  end)

  it("recv and send on one wrapper with no data: only sendr is set", function()
    local _, b = pair()
    local w = L.wrap(b, "b")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, { w }, 5)) end, "both")
    cosock.run()
    assert.is_nil(r[1])
    assert.same({ w }, r[2])
    assert.is_nil(r[3])
    L.assert_clean()
  end)

  it("a quiet fd times out normally and leaves no fd registered", function()
    local _, b = pair()
    local w = L.wrap(b, "b")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, nil, 0.02)) end, "reader")
    cosock.run()
    assert.is_nil(r[1])
    assert.is_nil(r[2])
    assert.equal("timeout", r[3])
    assert.same({}, w.wakes)
    assert.equal("recvr:function,recvr:nil", w:trace())
    L.assert_clean()
  end)

  it("a socket wait ended by the waker (not the fd) deregisters the fd", function()
    local _, b = pair()
    local w = L.wrap(b, "b")
    local r, fds_after
    cosock.spawn(function()
      r = pack(L.yield({ w }, nil, 5))
      fds_after = L.stats().fds
    end, "reader")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      w:fire("recvr")
    end, "waker")
    cosock.run()
    assert.same({ w }, r[1])
    assert.equal(0, fds_after)
    L.assert_clean()
  end)

  it("the fd interest passes from a task that timed out to the next waiter", function()
    local a, b = pair()
    local w = L.wrap(b, "b")
    local first, second
    cosock.spawn(function()
      first = pack(L.yield({ w }, nil, 0.01))
      cosock.spawn(function()
        second = pack(L.yield({ w }, nil, 5))
      end, "second")
      L.wait_until(function() return w:has_waker() end, "second park")
      assert(a:send("y"))
    end, "first")
    cosock.run()
    assert.equal("timeout", first[3])
    assert.is_not_nil(second[1], "second waiter timed out")
    assert.same({ w }, second[1])
    L.assert_clean()
  end)

  it("one task reading and another writing the same wrapper are woken separately", function()
    local a, b = pair()
    local w = L.wrap(b, "b")
    local rr, rs
    local order = {}
    cosock.spawn(function()
      rr = pack(L.yield({ w }, nil, 5))
      order[#order + 1] = "reader"
    end, "reader")
    cosock.spawn(function()
      rs = pack(L.yield(nil, { w }, 5))
      order[#order + 1] = "writer"
      -- only now make the socket readable
      assert(a:send("z"))
    end, "writer")
    cosock.run()
    assert.same({ "writer", "reader" }, order)
    assert.same({ w }, rs[2])
    assert.is_nil(rs[1])
    assert.same({ w }, rr[1])
    assert.is_nil(rr[2])
    assert.is_nil(rr[3])
    L.assert_clean()
  end)

  it("an inner_sock whose dirty() is true wakes a recv waiter at once", function()
    local _, b = pair()
    local proxy = {
      getfd = function() return b:getfd() end,
      dirty = function() return true end,
    }
    local w = L.wrap(proxy, "dirty")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, nil, 5)) end, "reader")
    cosock.run()
    assert.is_not_nil(r[1], "a dirty socket was not treated as readable")
    assert.same({ w }, r[1])
    assert.is_nil(r[3])
    assert.equal("recvr", w.wakes[1])
    L.assert_clean()
  end)

  it("a raw LuaSocket object passed in recvt raises 'non-wakeable socket'", function()
    local _, b = pair()
    cosock.spawn(function() L.yield({ b }, nil, 1) end, "raw")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "non-wakeable socket"), tostring(err))
  end)

  it("a raw LuaSocket object passed in sendt raises 'non-wakeable socket'", function()
    local a = pair()
    cosock.spawn(function() L.yield(nil, { a }, 1) end, "raw")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "non-wakeable socket"), tostring(err))
  end)

  it("200 concurrent waits on different sockets all complete", function()
    local N = 200
    local clients, wrappers, got = {}, {}, {}
    for i = 1, N do
      local a, b = pair()
      clients[i] = a
      wrappers[i] = L.wrap(b, "b" .. i)
    end
    local done = 0
    for i = 1, N do
      cosock.spawn(function()
        local r = L.yield({ wrappers[i] }, nil, 10)
        if r and r[1] == wrappers[i] then
          got[i] = wrappers[i].inner_sock:receive(1)
        end
        done = done + 1
      end, "reader" .. i)
    end
    local fds_parked
    cosock.spawn(function()
      L.wait_until(function()
        for i = 1, N do
          if not wrappers[i]:has_waker() then return false end
        end
        return true
      end, "all parked")
      fds_parked = L.stats().fds
      -- wake them in reverse order, a few per pass
      for i = N, 1, -1 do
        assert(clients[i]:send(string.char(65 + i % 26)))
        if i % 17 == 0 then L.pass() end
      end
    end, "sender")
    cosock.run()
    assert.equal(N, done)
    assert.equal(N, fds_parked)
    for i = 1, N do
      assert.equal(string.char(65 + i % 26), got[i], "reader " .. i)
    end
    L.assert_clean()
  end)

  for _, case in ipairs({
    { "math.huge", math.huge },
    { V.integers and "math.maxinteger" or "2^53 (math.maxinteger before 5.3)", V.maxinteger },
    { "1e300", 1e300 },
  }) do
    it("polls correctly when the nearest deadline is " .. case[1], function()
      -- the only timers are huge, so the poll's own timeout comes from them
      local a, b = pair()
      assert(a:send("ready"))
      local w = L.wrap(b, "b")
      local r
      local sleeper = cosock.spawn(function() L.yield(nil, nil, case[2]) end, "sleeper")
      cosock.spawn(function()
        r = pack(L.yield({ w }, nil, case[2]))
        sleeper:cancel()
      end, "reader")
      cosock.run()
      assert.same({ w }, r[1])
      assert.is_nil(r[3])
      L.assert_clean()
    end)
  end

  it("a _wake that raises: the error comes out of run and the loop stays usable", function()
    local a, b = pair()
    assert(a:send("x"))
    local w = L.wrap(b, "b")
    w._wake = function() error("_wake exploded 4471", 0) end
    cosock.spawn(function() L.yield({ w }, nil, 5) end, "reader")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.has(tostring(err), "_wake exploded 4471"), tostring(err))
    cosock.reset()
    assert.equal(0, L.stats().fds)
    local r
    local w2 = L.wrap(b, "b2")
    cosock.spawn(function() r = pack(L.yield({ w2 }, nil, 5)) end, "reader2")
    cosock.run()
    assert.same({ w2 }, r[1])
    L.assert_clean()
  end)

  it("waits on fds numbered above FD_SETSIZE work", function()
    local limit = tonumber(io.popen("ulimit -n"):read("*l"))
    if limit and limit <= 1200 then
      pending("RLIMIT_NOFILE " .. limit .. " too low to open fd 1100+")
      return
    end
    -- open sockets until fd numbers pass 1024, then wait on the last ones
    local pairs_ = {}
    local high = 0
    while high < 1100 do
      local a, b = pair()
      pairs_[#pairs_ + 1] = { a, b }
      high = math.max(a:getfd(), b:getfd())
    end
    local n = #pairs_
    local done = 0
    for i = n - 9, n do
      local a, b = pairs_[i][1], pairs_[i][2]
      local w = L.wrap(b, "b" .. i)
      cosock.spawn(function()
        local r = L.yield({ w }, nil, 5)
        if r and r[1] == w then done = done + 1 end
      end, "reader" .. i)
      cosock.spawn(function()
        L.wait_until(function() return w:has_waker() end, "park")
        assert(a:send("q"))
      end, "sender" .. i)
    end
    local ok, err = pcall(cosock.run)
    assert(ok, err)
    assert.equal("epoll", L.stats().backend) -- the loop moved to epoll by itself
    assert.equal(10, done)
    L.assert_clean()
  end)

  it("an fd closed while registered and reused at once by a new wait is still polled", function()
    -- reader1 waits on b1 (fd X). Another task closes b1 and wakes reader1 (as
    -- a wrapper's close does), then opens a listening socket, which the kernel
    -- gives the lowest free number, X, and waits on it in the same pass, before
    -- reader1's wait is taken down. The new wait must still be polled.
    local a1, b1 = pair()
    local w1 = L.wrap(b1, "b1")
    local r1, r2, reused
    cosock.spawn(function() r1 = pack(L.yield({ w1 }, nil, 5)) end, "reader1")
    cosock.spawn(function()
      L.wait_until(function() return w1:has_waker() end, "park")
      local x = b1:getfd()
      b1:close()
      w1:fire("recvr")
      -- fds are handed out lowest first: fill lower holes until X comes back
      local srv
      for _ = 1, 50 do
        srv = assert(socket.tcp())
        to_close[#to_close + 1] = srv
        assert(srv:bind("127.0.0.1", 0))
        if srv:getfd() == x then break end
      end
      assert(srv:listen(8))
      srv:settimeout(0)
      reused = (srv:getfd() == x)
      local _, port = srv:getsockname()
      local c = socket.tcp()
      to_close[#to_close + 1] = c
      c:settimeout(0)
      c:connect("127.0.0.1", port)
      r2 = pack(L.yield({ L.wrap(srv, "srv") }, nil, 5))
    end, "reopener")
    cosock.run()
    assert.is_not_nil(r1[1])
    assert.is_true(reused, "setup: fd number was not reused")
    assert.is_not_nil(r2[1], "the reused fd was not polled")
    assert.is_nil(r2[3])
    L.assert_clean()
    a1:close()
  end)

  it("an fd closed while registered and reused after the old wait ended is polled", function()
    local _, b1 = pair()
    local w1 = L.wrap(b1, "b1")
    local r2
    cosock.spawn(function()
      L.yield({ w1 }, nil, 0.01) -- times out; fd stays open
      local x = b1:getfd()
      b1:close()
      local srv
      for _ = 1, 50 do
        srv = assert(socket.tcp())
        to_close[#to_close + 1] = srv
        assert(srv:bind("127.0.0.1", 0))
        if srv:getfd() == x then break end
      end
      assert(srv:listen(8))
      srv:settimeout(0)
      local _, port = srv:getsockname()
      local c = socket.tcp()
      to_close[#to_close + 1] = c
      c:settimeout(0)
      c:connect("127.0.0.1", port)
      r2 = pack(L.yield({ L.wrap(srv, "srv") }, nil, 5))
      r2.reused = (srv:getfd() == x)
    end, "reader")
    cosock.run()
    assert.is_true(r2.reused, "setup: fd number was not reused")
    assert.is_not_nil(r2[1], "the reused fd was not polled")
    L.assert_clean()
  end)

  it("a task woken by data that closes its socket and waits on a new one with the same fd number is polled", function()
    -- the usual reconnect pattern, all inside one resume
    local a1, b1 = pair()
    local w1 = L.wrap(b1, "b1")
    local r1, r2, reused
    cosock.spawn(function()
      r1 = pack(L.yield({ w1 }, nil, 5))
      local x = b1:getfd()
      b1:close()
      local srv
      for _ = 1, 50 do
        srv = assert(socket.tcp())
        to_close[#to_close + 1] = srv
        assert(srv:bind("127.0.0.1", 0))
        if srv:getfd() == x then break end
      end
      reused = srv:getfd() == x
      assert(srv:listen(8))
      srv:settimeout(0)
      local _, port = srv:getsockname()
      local c = socket.tcp()
      to_close[#to_close + 1] = c
      c:settimeout(0)
      c:connect("127.0.0.1", port)
      r2 = pack(L.yield({ L.wrap(srv, "srv") }, nil, 5))
    end, "reconnector")
    cosock.spawn(function()
      L.wait_until(function() return w1:has_waker() end, "park")
      assert(a1:send("bye"))
    end, "sender")
    cosock.run()
    assert.is_not_nil(r1[1])
    assert.is_true(reused, "setup: fd number was not reused")
    assert.is_not_nil(r2[1], "the reused fd was not polled")
    L.assert_clean()
  end)

  it("a socket closed by another task, which wakes the waiter, leaves no fd registered", function()
    local _, b = pair()
    local w = L.wrap(b, "b")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, { w }, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker("recvr") end, "park")
      -- send side is writable at once, so make the wait recv-only next time
    end, "noop")
    cosock.run()
    assert.same({ w }, r[2])
    local r2
    cosock.spawn(function() r2 = pack(L.yield({ w }, nil, 5)) end, "waiter2")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker("recvr") end, "park")
      b:close()
      w:fire("recvr") -- as a wrapper's close does
    end, "closer")
    cosock.run()
    assert.same({ w }, r2[1])
    L.assert_clean()
  end)

  it("a wrapper whose inner_sock is swapped while parked still releases the fd it was polled on", function()
    local _, b = pair()
    local _, d = pair()
    local w = L.wrap(b, "swapped")
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, nil, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      w.inner_sock = d
      w:fire("recvr")
    end, "swapper")
    cosock.run()
    assert.same({ w }, r[1])
    L.assert_clean()
  end)

  it("two wrappers of one socket waited on by two tasks are both woken", function()
    local a, b = pair()
    local w1, w2 = L.wrap(b, "w1"), L.wrap(b, "w2")
    local r1, r2
    cosock.spawn(function() r1 = pack(L.yield({ w1 }, nil, 5)) end, "t1")
    cosock.spawn(function() r2 = pack(L.yield({ w2 }, nil, 5)) end, "t2")
    cosock.spawn(function()
      L.wait_until(function() return w1:has_waker() and w2:has_waker() end, "park")
      assert(a:send("both"))
    end, "sender")
    cosock.run()
    assert.same({ w1 }, r1[1])
    assert.same({ w2 }, r2[1])
    L.assert_clean()
  end)

  it("a _wake that cancels the other task polled on the same fd: that task is not resumed", function()
    local a, b = pair()
    local w1, w2 = L.wrap(b, "w1"), L.wrap(b, "w2")
    local r1, resumed2 = nil, false
    local h2
    -- each _wake first cancels the other task, then calls the waker it was
    -- last given (even if cancel took it back): a stale call for a cancelled task
    local function wake(self, kind)
      if h2:is_alive() then h2:cancel() end
      local f = self:last_waker(kind)
      if f then f() end
    end
    w1._wake, w2._wake = wake, wake
    cosock.spawn(function() r1 = pack(L.yield({ w1 }, nil, 5)) end, "t1")
    h2 = cosock.spawn(function()
      L.yield({ w2 }, nil, 5)
      resumed2 = true
    end, "t2")
    cosock.spawn(function()
      L.wait_until(function() return w1:has_waker() and w2:has_waker() end, "park")
      assert(a:send("x"))
    end, "sender")
    cosock.run()
    assert.same({ w1 }, r1[1])
    assert.is_false(resumed2)
    L.assert_clean()
  end)

  it("a _wake that spawns a task and tries run/reset: refused, loop consistent", function()
    local a, b = pair()
    local w = L.wrap(b, "w")
    local inner = {}
    local child_ran = false
    w._wake = function(self, kind)
      inner.run = { pcall(cosock.run) }
      inner.reset = { pcall(cosock.reset) }
      cosock.spawn(function() child_ran = true end, "child")
      local f = self.wakers[kind]
      if f then f() end
    end
    local r
    cosock.spawn(function() r = pack(L.yield({ w }, nil, 5)) end, "t")
    assert(a:send("x"))
    cosock.run()
    assert.same({ w }, r[1])
    assert.is_false(inner.run[1])
    assert.is_true(L.has(tostring(inner.run[2]), "already running"))
    assert.is_false(inner.reset[1])
    assert.is_true(L.has(tostring(inner.reset[2]), "cannot reset while the loop is running"))
    assert.is_true(child_ran)
    L.assert_clean()
  end)

  it("a wrapper removed from its recvt table after parking is still deregistered", function()
    local a, b = pair()
    local w = L.wrap(b, "b")
    local recvt = { w }
    local r
    cosock.spawn(function() r = pack(L.yield(recvt, nil, 5)) end, "reader")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      recvt[1] = nil         -- the task's table no longer names w
      recvt[2] = L.obj("intruder")
      assert(a:send("m"))
    end, "mutator")
    cosock.run()
    assert.same({ w }, r[1])
    L.assert_clean()
  end)

  it("a task cancelled while its recvt table was emptied releases the fd", function()
    local _, b = pair()
    local w = L.wrap(b, "b")
    local recvt = { w }
    local h = cosock.spawn(function() L.yield(recvt, nil, 5) end, "reader")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      recvt[1] = nil
      h:cancel()
    end, "canceller")
    cosock.run()
    assert.is_nil(w:last_call().fn, w:trace())
    L.assert_clean()
  end)

  it("a closed peer makes the fd readable", function()
    local a, b = pair()
    local w = L.wrap(b, "b")
    local r, data, err
    cosock.spawn(function()
      r = pack(L.yield({ w }, nil, 5))
      data, err = b:receive("*a")
    end, "reader")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      a:close()
    end, "closer")
    cosock.run()
    assert.same({ w }, r[1])
    -- LuaSocket reports the close (not "timeout"): "" or nil, "closed"
    assert.is_true(data == "" or err == "closed", tostring(data) .. " " .. tostring(err))
    L.assert_clean()
  end)

  it("a listening socket with a pending connection is readable", function()
    local srv = assert(socket.tcp())
    to_close[#to_close + 1] = srv
    assert(srv:bind("127.0.0.1", 0))
    assert(srv:listen(8))
    srv:settimeout(0)
    local _, port = srv:getsockname()
    local w = L.wrap(srv, "listener")
    local r, accepted
    cosock.spawn(function()
      r = pack(L.yield({ w }, nil, 5))
      accepted = srv:accept()
      if accepted then to_close[#to_close + 1] = accepted end
    end, "acceptor")
    cosock.spawn(function()
      L.wait_until(function() return w:has_waker() end, "park")
      local c = socket.tcp()
      to_close[#to_close + 1] = c
      c:settimeout(0)
      c:connect("127.0.0.1", port)
    end, "connector")
    cosock.run()
    assert.same({ w }, r[1])
    assert.is_not_nil(accepted)
    L.assert_clean()
  end)
end)
