-- cosock.channel.new(0): a rendezvous. A send completes only when a receive
-- has taken its message; nothing is ever queued.

local cosock = require "cosock"
local core = require "cosock.core"
local net = require "spec.support.net"
local L = require "spec.support.loop"

local channel = cosock.channel
local socket = cosock.socket
local pack = net.pack

local function add(t, v) t[#t + 1] = v end -- (see channel_bounded_spec.lua)


describe("rendezvous channel", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a receiver arriving later: the send waits until the receive took the message", function()
    local log = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function()
        add(log, "send")
        add(log, "sent " .. tostring(tx:send("m")))
      end, "sender")
      socket.sleep(0.01)
      add(log, "queued " .. #rx.link.queue .. ", senders " .. core.channel_senders(rx.link))
      add(log, "got " .. rx:receive())
    end, "receiver")
    net.run()
    assert.same({ "send", "queued 0, senders 1", "got m", "sent true" }, log)
  end)

  it("a receiver arriving earlier: it gets the message before the send returns", function()
    local log = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function()
        add(log, "receive")
        add(log, "got " .. rx:receive())
      end, "receiver")
      socket.sleep(0.01)
      assert.is_true(core.channel_waiting(rx.link))
      add(log, "send")
      add(log, "sent " .. tostring(tx:send("m")))
    end, "sender")
    net.run()
    assert.same({ "receive", "send", "got m", "sent true" }, log)
  end)

  it("passes many messages in order, never queueing one", function()
    local got, max = {}, 0
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function()
        for i = 1, 200 do
          assert.is_true(tx:send(i))
          if #tx.link.queue > max then max = #tx.link.queue end
        end
        tx:close()
      end, "producer")
      L.each_message(rx, function(m) add(got, m) end)
    end, "consumer")
    net.run()
    assert.equal(0, max)
    assert.equal(200, #got)
    for i = 1, 200 do assert.equal(i, got[i]) end
  end)

  it("serves several senders first come, first served", function()
    local got, sent = {}, {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      for _, name in ipairs({ "A", "B", "C" }) do
        cosock.spawn(function() add(sent, name .. " " .. tostring(tx:send(name))) end, name)
        socket.sleep(0)
      end
      assert.equal(3, core.channel_senders(rx.link))
      for _ = 1, 3 do add(got, rx:receive()) end
    end, "receiver")
    net.run()
    assert.same({ "A", "B", "C" }, got)
    assert.same({ "A true", "B true", "C true" }, sent)
  end)

  it("a sender timeout of 0 fails at once, even with a receiver waiting: a send must wait", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function() rx:settimeout(0.05); r.received = pack(rx:receive()) end, "receiver")
      socket.sleep(0)
      tx:settimeout(0)
      r.sent = pack(tx:send("x"))
      r.senders = core.channel_senders(tx.link)
    end, "sender")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.sent)
    assert.equal(0, r.senders)
    assert.same({ n = 2, nil, "timeout" }, r.received) -- the message never went
  end)

  it("a send that timed out is not received later", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      tx:settimeout(0.01)
      r.sent = pack(tx:send("late"))
      rx:settimeout(0)
      r.received = pack(rx:receive())
    end, "sender")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.sent)
    assert.same({ n = 2, nil, "timeout" }, r.received)
  end)

  it("a sender whose timeout passed before the receiver ran is skipped, the next one served", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      tx:settimeout(0.03)
      cosock.spawn(function() r.a = pack(tx:send("A")) end, "A")
      socket.sleep(0) -- (A waits in the line)
      tx:settimeout(nil)
      -- R's sleep ends before A's timeout; B, after R in the same pass, stays
      -- past both before it joins the line: both are due in the next pass, so
      -- R runs first while A, timed out, has not run yet. R cannot wake
      -- before B waits, however late the machine runs R (then A, due first,
      -- runs first: the same results).
      cosock.spawn(function() socket.sleep(0.005); r.got = rx:receive() end, "R")
      cosock.spawn(function()
        local t0 = core.monotime()
        while core.monotime() - t0 < 0.05 do end -- past both, without a pass
        r.b = pack(tx:send("B"))
      end, "B")
    end, "driver")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.a)
    assert.equal("B", r.got)
    assert.same({ n = 1, true }, r.b)
  end)

  -- Two senders wait, closer_of(tx, rx) closes the channel; then a receive
  -- waits and the sender closes. Every waiter gets nil, "closed".
  local function close_wakes_waiters(closer_of)
    local r = { senders = {} }
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      for i = 1, 2 do
        cosock.spawn(function() add(r.senders, pack(tx:send(i))) end, "sender " .. i)
      end
      socket.sleep(0)
      closer_of(tx, rx):close()
      r.received = pack(rx:receive()) -- their messages are gone with them
      local tx2, rx2 = channel.new(0)
      cosock.spawn(function() socket.sleep(0); tx2:close() end, "closer")
      r.waiting_receiver = pack(rx2:receive())
    end, "driver")
    net.run()
    assert.same({ { n = 2, nil, "closed" }, { n = 2, nil, "closed" } }, r.senders)
    assert.same({ n = 2, nil, "closed" }, r.received)
    assert.same({ n = 2, nil, "closed" }, r.waiting_receiver)
  end

  it("the receiver's close wakes the waiting senders with nil, 'closed'; the sender's a waiting receiver", function()
    close_wakes_waiters(function(_, rx) return rx end)
  end)

  it("with set_close_wakes(true), the sender's close wakes the waiting senders too", function()
    cosock.set_close_wakes(true)
    finally(function() cosock.set_close_wakes(false) end)
    close_wakes_waiters(function(tx) return tx end)
  end)

  it("a cancelled sender's message is never received, and the next sender is served", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      local a = cosock.spawn(function() tx:send("ghost"); r.a_resumed = true end, "A")
      socket.sleep(0)
      cosock.spawn(function() r.b = pack(tx:send("B")) end, "B")
      socket.sleep(0)
      a:cancel()
      assert.equal(1, core.channel_senders(rx.link))
      r.got = rx:receive()
    end, "receiver")
    net.run()
    assert.is_nil(r.a_resumed)
    assert.equal("B", r.got)
    assert.same({ n = 1, true }, r.b)
  end)

  it("a cancelled receiver takes nothing: the sender keeps waiting for the next one", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      local victim = cosock.spawn(function() rx:receive(); r.victim_resumed = true end, "victim")
      socket.sleep(0)
      victim:cancel()
      cosock.spawn(function() r.sent = pack(tx:send("x")) end, "sender")
      socket.sleep(0.01)
      r.still_waiting = core.channel_senders(tx.link)
      r.got = rx:receive()
    end, "driver")
    net.run()
    assert.is_nil(r.victim_resumed)
    assert.equal(1, r.still_waiting)
    assert.equal("x", r.got)
    assert.same({ n = 1, true }, r.sent)
  end)

  it("a receiver in select is woken when a sender comes; its receive then takes the message", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function() socket.sleep(0.01); r.sent = pack(tx:send("s")) end, "sender")
      r.selected = pack(socket.select({ rx }, nil, net.TIMEOUT))
      r.got = rx:receive()
    end, "receiver")
    net.run()
    assert.equal(1, #r.selected[1])
    assert.equal("s", r.got)
    assert.same({ n = 1, true }, r.sent)
  end)

  it("a sender in select is ready once a receiver waits, in receive or in select", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      r.nobody = pack(socket.select(nil, { tx }, 0.01))
      cosock.spawn(function() r.got1 = rx:receive() end, "receiving")
      r.for_receive = pack(socket.select(nil, { tx }, net.TIMEOUT))
      assert(tx:send(1))
      cosock.spawn(function()
        r.rx_selected = pack(socket.select({ rx }, nil, net.TIMEOUT))
        r.got2 = rx:receive()
      end, "selecting")
      r.for_select = pack(socket.select(nil, { tx }, net.TIMEOUT))
      r.sent2 = pack(tx:send(2))
    end, "sender")
    net.run()
    assert.same({ n = 3, nil, nil, "timeout" }, r.nobody)
    assert.equal(1, #r.for_receive[2])
    assert.equal(1, r.got1)
    assert.equal(1, #r.for_select[2])
    assert.equal(1, #r.rx_selected[1])
    assert.equal(2, r.got2)
    assert.same({ n = 1, true }, r.sent2)
  end)

  it("a send forwarded by the task's own coroutine is taken like a direct one", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(0)
      cosock.spawn(function()
        r.sent = pack(net.forwarding(function() return tx:send("fwd") end))
      end, "forwarder")
      socket.sleep(0.01)
      r.got = rx:receive()
    end, "receiver")
    net.run()
    assert.equal("fwd", r.got)
    assert.same({ n = 1, true }, r.sent)
  end)
end)
