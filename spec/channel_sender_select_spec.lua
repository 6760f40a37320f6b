-- A channel's sender in cosock.socket.select's sendt: ready when a send would
-- not wait (room in a bounded channel, a receiver waiting on a rendezvous,
-- always for an unbounded channel, and once closed); sender:setwaker("sendr").

local cosock = require "cosock"
local net = require "spec.support.net"

local channel = cosock.channel
local socket = cosock.socket
local pack = net.pack

describe("select on a channel sender", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("with room it is ready at once; full it waits until a receive makes room", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      r.room = pack(socket.select(nil, { tx }, net.TIMEOUT))
      assert(tx:send(1))
      r.full = pack(socket.select(nil, { tx }, 0.01))
      cosock.spawn(function() socket.sleep(0.01); r.got = rx:receive() end, "receiver")
      r.made_room = pack(socket.select(nil, { tx }, net.TIMEOUT))
      r.sent = pack(tx:send(2))
      r.queued = #tx.link.queue
    end, "sender")
    net.run()
    assert.equal(1, #r.room[2])
    assert.is_nil(r.room[1])
    assert.same({ n = 3, nil, nil, "timeout" }, r.full)
    assert.equal(1, r.got)
    assert.equal(1, #r.made_room[2])
    assert.same({ n = 1, true }, r.sent)
    assert.equal(1, r.queued)
  end)

  it("lists the sender, and a receiver beside it, in the order they became ready", function()
    local r
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      local tx2, rx2 = channel.new(1)
      assert(tx:send("full"))
      cosock.spawn(function()
        socket.sleep(0.01)
        assert(tx2:send("for rx2"))
        assert.equal("full", rx:receive())
      end, "other")
      r = pack(socket.select({ rx2 }, { tx }, net.TIMEOUT))
      r.rx2 = r[1] and r[1][1] == rx2
      r.tx = r[2] and r[2][1] == tx
    end, "selector")
    net.run()
    assert.is_true(r.rx2)
    assert.is_true(r.tx)
  end)

  it("an unbounded sender is always ready", function()
    local r
    cosock.spawn(function()
      local tx = channel.new()
      for i = 1, 100 do tx:send(i) end
      r = pack(socket.select(nil, { tx }, net.TIMEOUT))
    end, "selector")
    net.run()
    assert.equal(1, #r[2])
  end)

  it("a closed channel's sender is ready (its send returns false, 'closed')", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      cosock.spawn(function() socket.sleep(0.01); rx:close() end, "closer")
      r.selected = pack(socket.select(nil, { tx }, net.TIMEOUT))
      r.sent = pack(tx:send(2))
    end, "selector")
    net.run()
    assert.equal(1, #r.selected[2])
    assert.same({ n = 2, false, "closed" }, r.sent)
  end)

  it("room goes to the senders waiting in line first", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      cosock.spawn(function() r.blocked = pack(tx:send(2)) end, "blocked sender")
      socket.sleep(0)
      cosock.spawn(function()
        r.selected = pack(socket.select(nil, { tx }, net.TIMEOUT))
        r.queue_then = #tx.link.queue
      end, "selector")
      socket.sleep(0)
      assert.equal(1, rx:receive()) -- the blocked sender's message moves in: still full
      socket.sleep(0.01)            -- (a selector woken now would run here)
      r.early = r.selected
      assert.equal(2, rx:receive()) -- now there is room
    end, "receiver")
    net.run()
    assert.same({ n = 1, true }, r.blocked)
    assert.is_nil(r.early)
    assert.equal(1, #r.selected[2])
    assert.equal(0, r.queue_then)
  end)

  it("a select that timed out gave its waker back: the next select works", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = channel.new(1)
      assert(tx:send(1))
      r.first = pack(socket.select(nil, { tx }, 0.01))
      cosock.spawn(function() socket.sleep(0.01); rx:receive() end, "receiver")
      r.second = pack(socket.select(nil, { tx }, net.TIMEOUT))
    end, "selector")
    net.run()
    assert.same({ n = 3, nil, nil, "timeout" }, r.first)
    assert.equal(1, #r.second[2])
  end)

  describe("setwaker", function()
    it("accepts only 'sendr'", function()
      local tx = channel.new(1)
      assert.matches("unsupported wake kind: recvr",
        net.error_of(function() tx:setwaker("recvr", function() end) end), 1, true)
      assert.matches("unsupported wake kind: nil",
        net.error_of(function() tx:setwaker(nil, function() end) end), 1, true)
    end)

    it("calls a waker at once when a send would not wait, else when room comes, once", function()
      local tx, rx = channel.new(1)
      local calls = 0
      tx:setwaker("sendr", function() calls = calls + 1 end)
      assert.equal(1, calls)
      assert(tx:send("x"))
      tx:setwaker("sendr", function() calls = calls + 1 end)
      assert.equal(1, calls)
      rx:receive()
      assert.equal(2, calls)
      assert(tx:send("y"))
      rx:receive()
      assert.equal(2, calls) -- used once, then gone
    end)

    it("one waker at a time: a second is an error until the first is taken back", function()
      local tx = channel.new(1)
      assert(tx:send("x"))
      tx:setwaker("sendr", function() end)
      local err = net.error_of(function() tx:setwaker("sendr", function() end) end)
      assert.matches("waker already set, send can't be waited on from multiple places at once", err, 1, true)
      tx:setwaker("sendr", nil)
      tx:setwaker("sendr", function() end)
    end)

    it("two tasks selecting on one sender: run raises the same error", function()
      local tx = channel.new(1)
      assert(tx:send("x"))
      cosock.spawn(function() socket.select(nil, { tx }, 5) end, "s1")
      cosock.spawn(function() socket.select(nil, { tx }, 5) end, "s2")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.matches("^[^\n]-cosock/channel%.lua:%d+: waker already set, send can't be waited on from multiple places at once\n%(task 's2' waiting on table: 0?x?%x+%)$", err)
      cosock.reset()
    end)

    it("close calls the waker", function()
      local tx, rx = channel.new(1)
      local calls = 0
      assert(tx:send("x"))
      tx:setwaker("sendr", function() calls = calls + 1 end)
      rx:close()
      assert.equal(1, calls)
    end)
  end)
end)
