-- Regression: in cosock 0.2.0 a waker kept by an object and called after the task
-- moved on woke the task from its new, unrelated wait; a waker called twice listed
-- the object twice. A waker is valid for one wait, once.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("regress: stale or repeated wakers", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a channel send after the receiver timed out does not wake its next, unrelated wait", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      rx:settimeout(0.01)
      cosock.spawn(function()
        socket.sleep(0.05)  -- the receiver has timed out and sleeps now
        tx:send("late")
      end, "late sender")
      r.recv = pack(rx:receive())
      r.waker_kept = rx.link.waker ~= nil
      r.sleep = pack(socket.select(nil, nil, 0.2))
    end, "receiver")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.recv)
    assert.is_false(r.waker_kept)
    assert.same({ n = 3, nil, nil, "timeout" }, r.sleep)
  end)

  it("data arriving on a socket after its receive timed out does not wake the task's sleep", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(0.01)
      cosock.spawn(function() socket.sleep(0.05); assert(s:send("x")) end, "late writer")
      r.recv = pack(c:receive())
      r.waker_kept = c._recvr_waker ~= nil
      r.sleep = pack(socket.select(nil, nil, 0.2))
      c:close(); s:close()
    end, "reader")
    net.run()
    assert.same({ n = 3, nil, "timeout", "" }, r.recv)
    assert.is_false(r.waker_kept)
    assert.same({ n = 3, nil, nil, "timeout" }, r.sleep)
  end)

  it("two sends while the receiver waits list the receiver once", function()
    local r
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      cosock.spawn(function() tx:send(1); tx:send(2) end, "double sender")
      r = pack(socket.select({ rx }, nil, net.TIMEOUT))
    end, "selector")
    net.run()
    assert.equal(1, #r[1])
    assert.is_nil(r[3])
  end)

  it("a socket wrapper's _wake called twice wakes once", function()
    local r, woke
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function()
        woke = { c:_wake("recvr"), c:_wake("recvr") } -- true: woke the selector; false: nothing left
      end, "double waker")
      r = pack(socket.select({ c }, nil, net.TIMEOUT))
      c:close(); s:close()
    end, "selector")
    net.run()
    assert.same({ true, false }, woke)
    assert.equal(1, #r[1])
  end)
end)
