-- Regression (issue 21): cosock-native woke a task blocked on a socket that
-- another task closed (nil, "closed" at once) and reported a closed, empty
-- channel receiver ready to every select. Deployed cosock code broke: the Hue
-- EventSource client indexed the socket field its close() had cleared, and the
-- hub's device-thread loop spun for ever selecting the closed receiver. By
-- default close now does as cosock 0.2.0 does (the first block below); the
-- old behaviour is cosock.set_close_wakes(true) (the second block).

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("regress: close wakes a blocked task (by default it does not, as on cosock)", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("the EventSource shape: the reader's receive ends at its timeout, with cosock's values", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      local source = { sock = c }
      c:settimeout(1) -- (the close, 0.02 s in, comes first even on a loaded machine)
      cosock.spawn(function()
        socket.sleep(0.02)
        source.sock:close()
        source.sock = nil
      end, "close()")
      r.first = pack(source.sock:receive("*l"))
      r.sock = source.sock
      s:close()
    end, "reader")
    net.run()
    assert.same({ n = 3, nil, "timeout", "" }, r.first)
    assert.is_nil(r.sock) -- the close ran before the receive returned
  end)

  it("the device-thread loop: a select after receive said 'closed' parks, run ends in the stall", function()
    local turns = {}
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      cosock.spawn(function() tx:close() end, "closer")
      for i = 1, 3 do
        local ready = socket.select({ rx }, {})
        turns[i] = { #ready, pack(rx:receive()) }
      end
    end, "device thread")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.matches("cosock tried to call socket.select with no sockets and no timeout", err, 1, true)
    assert.same({ { 1, { n = 2, nil, "closed" } } }, turns)
    cosock.reset()
  end)
end)

describe("regress: with set_close_wakes(true) close wakes the blocked task", function()
  before_each(function() cosock.reset(); cosock.set_close_wakes(true) end)
  after_each(function() cosock.set_close_wakes(false); net.check_clean() end)

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
