-- cosock.channel.new(n), n > 0: bounded channels. A send waits while the queue
-- is full, waiting senders are served first come first served, close wakes
-- every waiter, and a send that gave up never delivers its message.

local cosock = require "cosock"
local core = require "cosock.core"
local net = require "spec.support.net"
local L = require "spec.support.loop"
local V = require "spec.support.version"
local compat = require "cosock.compat"

local channel = cosock.channel
local socket = cosock.socket
local pack = net.pack

-- Appends v to list t. (Not `t[#t + 1] = f()`: Lua computes #t before f()
-- runs, and f may wait while another task appends.)
local function add(t, v) t[#t + 1] = v end

-- A task that counts the passes of the loop until stop() (to tell whether a
-- call gave up the processor).
local function ticker()
  local t = { n = 0, running = true }
  cosock.spawn(function()
    while t.running do
      socket.sleep(0)
      t.n = t.n + 1
    end
  end, "ticker")
  function t.stop() t.running = false end
  return t
end

describe("bounded channel", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("new(capacity)", function()
    it("keeps cosock's shape: one link, #link.queue counts queued messages", function()
      local tx, rx = channel.new(3)
      assert.is_true(rawequal(tx.link, rx.link))
      assert.is_false(tx.link.closed)
      assert.equal(0, #tx.link.queue)
      assert.is_true(tx:send("a"))
      assert.is_true(tx:send(nil))
      assert.equal(2, #rx.link.queue)
      assert.equal("a", rx:receive())
      assert.same({ n = 1 }, pack(rx:receive()))
      assert.equal(0, #tx.link.queue)
    end)

    it("accepts an integral float capacity", function()
      local tx = channel.new(2.0)
      assert.is_true(tx:send(1))
      assert.is_true(tx:send(2))
      tx:settimeout(0)
      assert.same({ n = 2, nil, "timeout" }, pack(tx:send(3)))
    end)

    it("raises a clear error naming new for a bad capacity", function()
      local cases = {
        { -1, "got %-1%)" }, { 1.5, "got 1%.5%)" }, { 0 / 0, "got %-?nan%)" },
        { math.huge, "got inf%)" }, { -math.huge, "got %-inf%)" },
        -- the most negative integer (5.3+), or a huge negative float before 5.3
        { V.mininteger, V.integers and "got %-%d+%)" or "got %-9%.007199254741e%+15%)" },
      }
      for _, c in ipairs(cases) do
        local err = net.error_of(function() channel.new(c[1]) end)
        assert.matches("bad argument #1 to 'new' (capacity must be a non-negative integer, got", err, 1, true)
        assert.matches(c[2], err)
      end
      for _, v in ipairs({ "3", true, {}, print }) do
        local err = net.error_of(function() channel.new(v) end)
        assert.matches("bad argument #1 to 'new' (capacity must be a non-negative integer or nil, got "
          .. type(v) .. ")", err, 1, true)
      end
    end)
  end)

  it("a send waits while the queue is full and completes when a receive makes room", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(2)
      tx:settimeout(net.TIMEOUT)
      cosock.spawn(function()
        for i = 1, 4 do
          add(r, ("send %d: %s (queued %d)"):format(i, tostring(tx:send(i)), #tx.link.queue))
        end
      end, "producer")
      socket.sleep(0.01)
      r[#r + 1] = "queue " .. #rx.link.queue .. ", senders " .. core.channel_senders(rx.link)
      for _ = 1, 4 do add(r, "got " .. rx:receive() .. " (queued " .. #rx.link.queue .. ")") end
    end, "consumer")
    net.run()
    assert.same({
      "send 1: true (queued 1)", "send 2: true (queued 2)",
      "queue 2, senders 1",
      -- each receive moves the waiting sender's message into the queue
      "got 1 (queued 2)", "got 2 (queued 1)", "got 3 (queued 0)",
      -- the consumer waits; the producer learns its send 3 went through
      "send 3: true (queued 0)", "send 4: true (queued 1)",
      "got 4 (queued 0)",
    }, r)
  end)

  it("never holds more than its capacity, whatever the interleaving", function()
    local max, got = 0, {}
    cosock.spawn(function()
      local tx, rx = channel.new(3)
      tx:settimeout(net.TIMEOUT)
      rx:settimeout(net.TIMEOUT)
      cosock.spawn(function()
        for i = 1, 500 do
          assert(tx:send(i))
          if #tx.link.queue > max then max = #tx.link.queue end
          if i % 7 == 0 then socket.sleep(0) end
        end
        tx:close()
      end, "producer")
      while true do
        local m = rx:receive()
        if m == nil then break end
        got[#got + 1] = m
        if #got % 5 == 0 then socket.sleep(0) end
      end
    end, "consumer")
    net.run()
    assert.equal(3, max)
    assert.equal(500, #got)
    for i = 1, 500 do assert.equal(i, got[i]) end
  end)

  it("serves waiting senders first come, first served, several tasks on one sender", function()
    local sent, got = {}, {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      tx:settimeout(net.TIMEOUT)
      assert(tx:send("first"))
      for _, name in ipairs({ "A", "B", "C" }) do
        cosock.spawn(function()
          add(sent, name .. " " .. tostring(tx:send(name)))
        end, name)
        socket.sleep(0) -- they join the line in this order
      end
      cosock.spawn(function() add(sent, "D " .. tostring(tx:send("D"))) end, "D")
      socket.sleep(0)
      assert.equal(4, core.channel_senders(rx.link))
      -- each receive moves the next in line into the queue and wakes it
      for _ = 1, 5 do add(got, rx:receive()) end
    end, "driver")
    net.run()
    assert.same({ "first", "A", "B", "C", "D" }, got)
    assert.same({ "A true", "B true", "C true", "D true" }, sent)
  end)

  describe("sender:settimeout", function()
    it("returns nothing and checks its argument like the receiver's (as cosock's receiver)", function()
      local tx = channel.new(1)
      assert.same({ n = 0 }, compat.pack(tx:settimeout(0.5)))
      assert.same({ n = 0 }, compat.pack(tx:settimeout("2")))
      assert.same({ n = 0 }, compat.pack(tx:settimeout(nil)))
      assert.matches("bad argument #1 to 'settimeout' (number expected, got table)",
        net.error_of(function() tx:settimeout({}) end), 1, true)
      assert.matches("bad argument #1 to 'settimeout' (number expected, got nan)",
        net.error_of(function() tx:settimeout(0 / 0) end), 1, true)
    end)

    it("0 or less fails at once on a full queue, without giving up the processor", function()
      local r = {}
      cosock.spawn(function()
        local tick = ticker()
        local tx, rx = channel.new(1)
        assert(tx:send("kept"))
        for _, t in ipairs({ 0, -1 }) do
          tx:settimeout(t)
          local before = tick.n
          r[t] = pack(tx:send("dropped"))
          r[t].passes = tick.n - before
        end
        r.queued = #tx.link.queue
        r.after = pack(rx:receive())
        tx:settimeout(0)
        r.room = pack(tx:send("fits")) -- with room, 0 does not matter
        tick.stop()
      end, "sender")
      net.run()
      assert.same({ n = 2, nil, "timeout", passes = 0 }, r[0])
      assert.same({ n = 2, nil, "timeout", passes = 0 }, r[-1])
      assert.equal(1, r.queued)
      assert.same({ n = 1, "kept" }, r.after)
      assert.same({ n = 1, true }, r.room)
    end)

    it("a positive timeout gives nil, 'timeout'; the message is never delivered", function()
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new(1)
        assert(tx:send(1))
        tx:settimeout(0.02)
        local t0 = core.monotime()
        r.timed_out = pack(tx:send("late"))
        r.waited = core.monotime() - t0 >= 0.015
        r.senders = core.channel_senders(tx.link)
        rx:settimeout(0)
        r.first = pack(rx:receive())
        r.second = pack(rx:receive()) -- "late" must not come
        tx:settimeout(nil)
        r.again = pack(tx:send(2))
        r.third = pack(rx:receive())
      end, "sender")
      net.run()
      assert.same({ n = 2, nil, "timeout" }, r.timed_out)
      assert.is_true(r.waited)
      assert.equal(0, r.senders)
      assert.same({ n = 1, 1 }, r.first)
      assert.same({ n = 2, nil, "timeout" }, r.second)
      assert.same({ n = 1, true }, r.again)
      assert.same({ n = 1, 2 }, r.third)
    end)

    it("a sender that timed out leaves its place: the one behind it is served", function()
      local r = {}
      cosock.spawn(function()
        local tx, rx = channel.new(1)
        assert(tx:send(0))
        -- one sender object, two tasks: the timeout is read when send starts
        tx:settimeout(0.01)
        cosock.spawn(function() r.impatient = pack(tx:send("impatient")) end, "impatient")
        socket.sleep(0)
        tx:settimeout(nil)
        cosock.spawn(function() r.patient = pack(tx:send("patient")) end, "patient")
        socket.sleep(0)
        r.before = core.channel_senders(tx.link)
        socket.sleep(0.05)
        r.after = core.channel_senders(tx.link)
        r.got = { rx:receive(), rx:receive() }
      end, "driver")
      net.run()
      assert.equal(2, r.before)
      assert.equal(1, r.after)
      assert.same({ n = 2, nil, "timeout" }, r.impatient)
      assert.same({ 0, "patient" }, r.got)
      assert.same({ n = 1, true }, r.patient)
    end)
  end)

  describe("close", function()
    for _, side in ipairs({ "sender", "receiver" }) do
      it("from the " .. side .. " wakes every waiting sender with nil, 'closed'; queued messages stay", function()
        local r = { senders = {} }
        -- (the virtual clock: the sender's own close leaves its senders
        -- waiting until their timeout, as cosock's does)
        net.run_virtual(function() cosock.spawn(function()
          local tx, rx = channel.new(2)
          tx:settimeout(net.TIMEOUT)
          assert(tx:send(1))
          assert(tx:send(2))
          for i = 3, 5 do
            cosock.spawn(function() add(r.senders, pack(tx:send(i))) end, "sender " .. i)
          end
          socket.sleep(0)
          assert.equal(3, core.channel_senders(tx.link))
          if side == "sender" then tx:close() else rx:close() end
          r.after_close = core.channel_senders(tx.link)
          r.closed = tx.link.closed
          r.send_closed = pack(tx:send(6))
          socket.sleep(0)
          r.got = { rx:receive(), rx:receive() }
          r.last = pack(rx:receive())
        end, "driver") end)
        assert.same({ { n = 2, nil, "closed" }, { n = 2, nil, "closed" }, { n = 2, nil, "closed" } }, r.senders)
        assert.equal(0, r.after_close)
        assert.is_true(r.closed)
        assert.same({ n = 2, false, "closed" }, r.send_closed)
        assert.same({ 1, 2 }, r.got)
        assert.same({ n = 2, nil, "closed" }, r.last)
      end)
    end

    it("wakes a waiting receiver with nil, 'closed'", function()
      local r
      cosock.spawn(function()
        local tx, rx = channel.new(4)
        rx:settimeout(net.TIMEOUT)
        cosock.spawn(function() socket.sleep(0); tx:close() end, "closer")
        r = pack(rx:receive())
      end, "receiver")
      net.run()
      assert.same({ n = 2, nil, "closed" }, r)
    end)

    it("twice is harmless", function()
      local tx, rx = channel.new(1)
      tx:close()
      rx:close()
      tx:close()
      assert.same({ n = 2, nil, "closed" }, pack(rx:receive()))
    end)
  end)

  it("a cancelled sender leaves no message behind and frees its place in line", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send("queued"))
      local a = cosock.spawn(function() tx:send("ghost"); r.a_resumed = true end, "A")
      socket.sleep(0)
      cosock.spawn(function() r.b = pack(tx:send("B")) end, "B")
      socket.sleep(0)
      assert.equal(2, core.channel_senders(tx.link))
      a:cancel()
      r.senders = core.channel_senders(tx.link)
      rx:settimeout(0)
      r.got = { rx:receive(), rx:receive() }
      socket.sleep(0)
      r.rest = pack(rx:receive())
    end, "driver")
    net.run()
    assert.is_nil(r.a_resumed)
    assert.equal(1, r.senders)
    assert.same({ "queued", "B" }, r.got)
    assert.same({ n = 1, true }, r.b)
    assert.same({ n = 2, nil, "timeout" }, r.rest)
  end)

  it("a second task receiving on the channel gets cosock's error, from run", function()
    local _, rx = channel.new(1)
    cosock.spawn(function() rx:receive() end, "r1")
    cosock.spawn(function() rx:receive() end, "r2")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    -- (from channel.lua's setwaker, with its position, as cosock's assert gives it)
    assert.matches("^[^\n]-cosock/channel%.lua:%d+: waker already set, receive can't be waited on from multiple places at once\n%(task 'r2' waiting on table: [^\n]*%)$", err)
  end)

  it("a sender waiting on a full channel that nobody receives from stalls run", function()
    local tx = channel.new(1)
    cosock.spawn(function() tx:send(1); tx:send(2) end, "stuck sender")
    local _, ok, err = L.capture(cosock.run)
    assert.is_false(ok)
    assert.matches("cosock tried to call socket.select with no sockets and no timeout", err, 1, true)
    assert.matches("task 'stuck sender' waits to send on a channel", err, 1, true)
    cosock.reset()
  end)

  it("a send in a coroutine whose yields the task forwards waits in line too", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      cosock.spawn(function() r.plain = pack(tx:send("plain")) end, "plain sender")
      socket.sleep(0)
      cosock.spawn(function()
        r.forwarded = pack(net.forwarding(function() return tx:send("forwarded") end))
      end, "forwarding sender")
      socket.sleep(0)
      assert.equal(2, core.channel_senders(tx.link))
      r.got = { rx:receive(), rx:receive(), rx:receive() }
    end, "driver")
    net.run()
    assert.same({ 1, "plain", "forwarded" }, r.got)
    assert.same({ n = 1, true }, r.plain)
    assert.same({ n = 1, true }, r.forwarded)
  end)

  it("a forwarded send times out and is cancelled like a direct one", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      tx:settimeout(0.01)
      r.timed_out = pack(net.forwarding(function() return tx:send("timed out") end))
      tx:settimeout(nil)
      local victim = cosock.spawn(function()
        net.forwarding(function() return tx:send("cancelled") end)
        r.victim_resumed = true
      end, "victim")
      socket.sleep(0)
      r.waiting = core.channel_senders(tx.link)
      victim:cancel()
      r.after_cancel = core.channel_senders(tx.link)
      rx:settimeout(0)
      r.got = { rx:receive() }
      r.rest = pack(rx:receive())
    end, "driver")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.timed_out)
    assert.equal(1, r.waiting)
    assert.equal(0, r.after_cancel)
    assert.is_nil(r.victim_resumed)
    assert.same({ 1 }, r.got)
    assert.same({ n = 2, nil, "timeout" }, r.rest)
  end)

  it("a forwarded send's proxy refuses a forged proxy with a clear error", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      local co = coroutine.create(function() return tx:send("forwarded") end)
      local ok, recvt, sendt = coroutine.resume(co)
      assert(ok and recvt == nil, recvt)
      local proxy = sendt[1]
      for _, forged in ipairs({ { io.stdout, 1 }, { {}, 1 }, {} }) do
        r[#r + 1] = net.error_of(function() proxy.setwaker(forged, "sendr", function() end) end)
      end
      r.waiting = core.channel_senders(tx.link)
      proxy:setwaker("sendr", nil) -- the loop's end of the wait: out of line
      r.after = core.channel_senders(tx.link)
      rx:settimeout(0)
      r.got = pack(rx:receive())
      r.rest = pack(rx:receive())
    end, "driver")
    net.run()
    assert.equal(3, #r)
    for i = 1, 3 do assert.matches("a channel's send proxy expected", r[i], 1, true) end
    assert.equal(1, r.waiting)
    assert.equal(0, r.after)
    assert.same({ n = 1, 1 }, r.got)
    assert.same({ n = 2, nil, "timeout" }, r.rest)
  end)

  it("a send that would wait outside any task raises and leaves nothing in line", function()
    local tx, rx = channel.new(1)
    assert(tx:send(1))
    assert.matches("attempt to yield from outside a coroutine",
      net.error_of(function() tx:send(2) end), 1, true)
    assert.equal(0, core.channel_senders(tx.link))
    rx:settimeout(0)
    assert.same({ n = 1, 1 }, pack(rx:receive()))
    assert.same({ n = 2, nil, "timeout" }, pack(rx:receive()))
  end)

  it("carries nil messages through the queue and the line", function()
    local got = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      cosock.spawn(function()
        assert(tx:send(nil))
        assert(tx:send(nil)) -- waits in line
        assert(tx:send("end"))
      end, "sender")
      socket.sleep(0)
      for i = 1, 3 do got[i] = pack(rx:receive()) end
    end, "receiver")
    net.run()
    assert.same({ { n = 1 }, { n = 1 }, { n = 1, "end" } }, got)
  end)

  it("the method tables work on any sender or receiver; another object is a clear error", function()
    local tx, rx = channel.new(2)
    assert.is_true(channel.sender.send(tx, "via class"))
    assert.equal("via class", channel.receiver.receive(rx))
    assert.is_true(tx.send(tx, "own send"))
    assert.equal("own send", rx.receive(rx))
    local tx2, rx2 = channel.new(1)
    assert.is_true(tx.send(tx2, "to the other channel")) -- self decides the channel
    assert.equal("to the other channel", rx2:receive())
    assert.matches("bad argument #1 to 'send' (cosock.channel sender expected, got a receiver)",
      net.error_of(function() channel.sender.send(rx, 1) end), 1, true)
    assert.matches("bad argument #1 to 'receive' (cosock.channel receiver expected, got table)",
      net.error_of(function() rx.receive({}) end), 1, true)
    assert.matches("bad argument #1 to 'close' (cosock.channel sender expected, got nil)",
      net.error_of(function() tx.close() end), 1, true)
  end)
end)
