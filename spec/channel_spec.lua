-- cosock.channel: unbounded channels between tasks, speaking the waker protocol.

local cosock = require "cosock"
local net = require "spec.support.net"
local L = require "spec.support.loop"

local channel = cosock.channel
local socket = cosock.socket
local pack = net.pack


describe("cosock.channel", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("sender and receiver share a link whose queue length counts queued messages", function()
    local tx, rx = channel.new()
    assert.is_true(rawequal(tx.link, rx.link))
    assert.equal(0, #tx.link.queue)
    assert.is_true(tx:send("a"))
    assert.is_true(tx:send(nil))
    assert.is_true(tx:send(false))
    assert.equal(3, #tx.link.queue)
    assert.equal("a", rx:receive())
    assert.equal(2, #rx.link.queue)
    assert.same({ n = 1 }, pack(rx:receive()))
    assert.same({ n = 1, false }, pack(rx:receive()))
    assert.equal(0, #tx.link.queue)
  end)

  it("delivers messages in order, also many of them", function()
    local tx, rx = channel.new()
    for i = 1, 5000 do tx:send(i) end
    assert.equal(5000, #tx.link.queue)
    for i = 1, 5000 do assert.equal(i, rx:receive()) end
    assert.equal(0, #tx.link.queue)
    tx:send("again")
    assert.equal(1, #tx.link.queue)
    assert.equal("again", rx:receive())
  end)

  it("a receiver waits until another task sends", function()
    local got = {}
    cosock.spawn(function()
      local tx, rx = channel.new()
      rx:settimeout(net.TIMEOUT)
      cosock.spawn(function()
        for i = 1, 3 do
          socket.sleep(0)
          tx:send(i)
        end
        tx:close()
      end, "producer")
      while true do
        local m, err = rx:receive()
        if m == nil then got.err = err break end
        got[#got + 1] = m
      end
    end, "consumer")
    net.run()
    assert.same({ 1, 2, 3, err = "closed" }, got)
  end)

  it("closing from either side wakes a waiting receiver with nil, 'closed'", function()
    local r = {}
    -- (the virtual clock: the receiver's own close leaves its waiter waiting
    -- until its timeout, as cosock's does)
    net.run_virtual(function() cosock.spawn(function()
      local tx1, rx1 = channel.new()
      local tx2, rx2 = channel.new()
      rx1:settimeout(net.TIMEOUT)
      rx2:settimeout(net.TIMEOUT)
      cosock.spawn(function() socket.sleep(0); tx1:close() end, "sender closes")
      r.by_sender = pack(rx1:receive())
      cosock.spawn(function() socket.sleep(0); rx2:close() end, "receiver closes")
      r.by_receiver = pack(rx2:receive())
      r.send_after = pack(tx2:send("late"))
    end, "waiter") end)
    assert.same({ n = 2, nil, "closed" }, r.by_sender)
    assert.same({ n = 2, nil, "closed" }, r.by_receiver)
    assert.same({ n = 2, false, "closed" }, r.send_after)
  end)

  it("queued messages survive close", function()
    local tx, rx = channel.new()
    tx:send(1); tx:send(2)
    tx:close()
    assert.same({ n = 2, false, "closed" }, pack(tx:send(3)))
    assert.equal(1, rx:receive())
    assert.equal(2, rx:receive())
    assert.same({ n = 2, nil, "closed" }, pack(rx:receive()))
    assert.same({ n = 2, nil, "closed" }, pack(rx:receive()))
  end)

  it("settimeout: 0 and small values give nil, 'timeout'; the channel still works after", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new()
      rx:settimeout(0)
      r.zero = pack(rx:receive())
      rx:settimeout(0.01)
      r.small = pack(rx:receive())
      rx:settimeout(net.TIMEOUT)
      cosock.spawn(function() tx:send("late") end, "sender")
      r.after = pack(rx:receive())
    end, "waiter")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.zero)
    assert.same({ n = 2, nil, "timeout" }, r.small)
    assert.same({ n = 1, "late" }, r.after)
  end)

  describe("as in cosock 0.2.0", function()
    it("settimeout returns nothing", function()
      local _, rx = channel.new()
      assert.same({ n = 0 }, pack(rx:settimeout(1)))
      assert.same({ n = 0 }, pack(rx:settimeout(nil)))
      assert.same({ n = 0 }, pack(rx:settimeout("2")))
      assert.equal(2, rx.timeout)
    end)

    it("a zero or negative timeout fails a receive with nothing queued at once; queued messages still come", function()
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new()
        for _, t in ipairs { -1, -0.5, 0 } do
          rx:settimeout(t)
          r[#r + 1] = pack(rx:receive())
        end
        tx:send("queued")
        r[#r + 1] = pack(rx:receive())
      end, "receiver")
      net.run()
      assert.same({ { n = 2, nil, "timeout" }, { n = 2, nil, "timeout" }, { n = 2, nil, "timeout" },
                    { n = 1, "queued" } }, r)
    end)

    it("setwaker's errors carry channel.lua's position, as cosock's assert gives them", function()
      local _, rx = channel.new()
      rx:setwaker("recvr", function() end)
      assert.matches("^[^\n]*cosock/channel%.lua:%d+: waker already set, receive can't be waited on from multiple places at once$",
        net.error_of(function() rx:setwaker("recvr", function() end) end))
      assert.matches("^[^\n]*cosock/channel%.lua:%d+: unsupported wake kind: sendr$",
        net.error_of(function() rx:setwaker("sendr", function() end) end))
    end)
  end)

  describe("setwaker", function()
    it("accepts only 'recvr'", function()
      local _, rx = channel.new()
      assert.matches("unsupported wake kind: sendr",
        net.error_of(function() rx:setwaker("sendr", function() end) end), 1, true)
    end)

    it("rejects a second waker while one is set, with cosock's message", function()
      local _, rx = channel.new()
      rx:setwaker("recvr", function() end)
      local ok, err = pcall(rx.setwaker, rx, "recvr", function() end)
      assert.is_false(ok)
      assert.matches("waker already set, receive can't be waited on from multiple places at once",
        err, 1, true)
      rx:setwaker("recvr", nil)
      rx:setwaker("recvr", function() end) -- free again
    end)

    it("calls a waker at once when messages are queued, else on send, once", function()
      local tx, rx = channel.new()
      local calls = 0
      tx:send("x")
      rx:setwaker("recvr", function() calls = calls + 1 end)
      assert.equal(1, calls)
      rx:receive()
      rx:setwaker("recvr", nil)
      rx:setwaker("recvr", function() calls = calls + 1 end)
      assert.equal(1, calls)
      tx:send("y")
      tx:send("z")
      assert.equal(2, calls)
    end)

    it("after a waiting task is cancelled, another task can wait on the channel", function()
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new()
        rx:settimeout(net.TIMEOUT)
        local first = cosock.spawn(function()
          rx:receive()
          r.first_resumed = true
        end, "first")
        socket.sleep(0) -- let it park
        first:cancel()
        cosock.spawn(function() r.second = rx:receive() end, "second")
        socket.sleep(0)
        tx:send("for the second")
      end, "driver")
      net.run()
      assert.is_nil(r.first_resumed)
      assert.equal("for the second", r.second)
    end)
  end)

  describe("one waiter per channel, whichever way it waits", function()
    local MSG = "waker already set, receive can't be waited on from multiple places at once"

    it("a second receiver makes run raise cosock's exact text, from the loop", function()
      local _, rx = channel.new()
      cosock.spawn(function() rx:receive() end, "r1")
      cosock.spawn(function() rx:receive() end, "r2")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      -- cosock's line, then the task and the object (issue 22)
      assert.matches("^[^\n]*cosock/channel%.lua:%d+: " .. MSG:gsub("%p", "%%%0") .. "\n%(task 'r2' waiting on table: ", err)
      assert.matches(tostring(rx):gsub("%p", "%%%0") .. "%)$", err)
    end)

    it("a task in select and a task in receive on one channel: the same error", function()
      local _, rx = channel.new()
      cosock.spawn(function() socket.select({ rx }, nil, 5) end, "selector")
      cosock.spawn(function() rx:receive() end, "receiver")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.matches("^[^\n]*cosock/channel%.lua:%d+: " .. MSG:gsub("%p", "%%%0") .. "\n%(task 'receiver' waiting on table: ", err)
    end)

    it("after a receive timed out, select and receive can wait on the channel again", function()
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new()
        rx:settimeout(0.01)
        r.timed_out = pack(rx:receive())
        r.waiting = require("cosock.core").channel_waiting(rx.link)
        cosock.spawn(function() socket.sleep(0.01); tx:send("one"); tx:send("two") end, "sender")
        r.selected = pack(socket.select({ rx }, nil, 5))
        r.first = rx:receive()
        rx:settimeout(5)
        r.second = rx:receive()
      end, "receiver")
      net.run()
      assert.same({ n = 2, nil, "timeout" }, r.timed_out)
      assert.is_false(r.waiting)
      assert.equal(1, #r.selected[1])
      assert.equal("one", r.first)
      assert.equal("two", r.second)
    end)

    it("the loop taking back a select's waker leaves the next receiver's wait in place", function()
      -- A waits in select; B's send wakes it, B takes the message itself and
      -- waits in receive before A runs. The loop's setwaker(nil) for A must
      -- not end B's wait: the next send has to reach B.
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new()
        cosock.spawn(function() r.selected = pack(socket.select({ rx }, nil, 5)) end, "A")
        cosock.spawn(function()
          socket.sleep(0.01)
          tx:send("x")
          r.first = rx:receive()
          r.second = rx:receive() -- waits; no timeout: a lost wake would stall run
        end, "B")
        socket.sleep(0.05)
        tx:send("y")
      end, "sender")
      net.run()
      assert.equal(1, #r.selected[1])
      assert.equal("x", r.first)
      assert.equal("y", r.second)
    end)

    it("a receive inside a coroutine whose yields the task forwards is woken by send", function()
      local got
      cosock.spawn(function()
        local tx, rx = channel.new()
        cosock.spawn(function() socket.sleep(0.01); tx:send("forwarded") end, "sender")
        got = net.forwarding(function() return rx:receive() end)
      end, "forwarder")
      net.run()
      assert.equal("forwarded", got)
    end)
  end)

  it("a receiver can be passed to select after the message was sent (via-select)", function()
    local r
    cosock.spawn(function()
      local tx, rx = channel.new()
      cosock.spawn(function() tx:send(true) end, "sender")
      socket.sleep(0.01)
      r = pack(socket.select({ rx }, {}, net.TIMEOUT))
      r.msg = rx:receive()
    end, "receiver")
    net.run()
    assert.equal(1, #r[1])
    assert.is_nil(r[2])
    assert.is_nil(r[3])
    assert.is_true(r.msg)
  end)

  it("a pipeline of tasks passes every message through", function()
    local out = {}
    cosock.spawn(function()
      local tx1, rx1 = channel.new()
      local tx2, rx2 = channel.new()
      rx1:settimeout(net.TIMEOUT)
      rx2:settimeout(net.TIMEOUT)
      cosock.spawn(function()
        for i = 1, 100 do tx1:send(i) end
        tx1:close()
      end, "source")
      cosock.spawn(function()
        L.each_message(rx1, function(m) tx2:send(m * 2) end)
        tx2:close()
      end, "double")
      L.each_message(rx2, function(m) out[#out + 1] = m end)
    end, "sink")
    net.run()
    assert.equal(100, #out)
    for i = 1, 100 do assert.equal(2 * i, out[i]) end
  end)
end)
