-- Regression: in cosock 0.2.0 closing a socket from another task left a task
-- blocked in receive on it waiting until its timeout (forever without one).
-- cosock-native wakes it with the error LuaSocket gives ("closed").

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("regress: close leaves a blocked receiver waiting", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a receiver without a timeout is woken by close and gets nil, 'closed', partial", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(nil) -- no limit: without the wake this would hang (the loop would stall)
      assert(s:send("half"))
      cosock.spawn(function() socket.sleep(0.02); c:close() end, "closer")
      r = pack(c:receive("*l"))
      s:close()
    end, "reader")
    net.run()
    assert.same({ n = 3, nil, "closed", "half" }, r)
  end)

  it("accept blocked on a server socket is woken by close", function()
    local r
    cosock.spawn(function()
      local srv = net.listen()
      srv:settimeout(nil)
      cosock.spawn(function() socket.sleep(0.01); srv:close() end, "closer")
      r = pack(srv:accept())
    end, "acceptor")
    net.run()
    assert.same({ n = 2, nil, "closed" }, r)
  end)

  it("'*a' on a socket closed locally is an error, not the data so far", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(nil)
      assert(s:send("some"))
      cosock.spawn(function() socket.sleep(0.02); c:close() end, "closer")
      r = pack(c:receive("*a"))
      s:close()
    end, "reader")
    net.run()
    assert.same({ n = 3, nil, "closed", "some" }, r)
  end)

  it("a task selecting on a wrapper that is already closed is woken at once", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:close()
      r = pack(socket.select({ c }, nil, nil))
      r.recv = pack(c:receive())
      s:close()
    end, "selector")
    net.run()
    assert.equal(1, #r[1])
    assert.same({ n = 2, nil, "closed" }, { n = 2, r.recv[1], r.recv[2] })
  end)

  it("select over a closed channel's receiver reports it ready, a closing receiver wakes its waiter", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      tx:close()
      r.selected = pack(socket.select({ rx }, nil, net.TIMEOUT))
      local _, rx2 = cosock.channel.new()
      cosock.spawn(function() socket.sleep(0.01); rx2:close() end, "closer")
      r.received = pack(rx2:receive())
    end, "selector")
    net.run()
    assert.equal(1, #r.selected[1])
    assert.is_nil(r.selected[3])
    assert.same({ n = 2, nil, "closed" }, r.received)
  end)
end)
