-- cosock.socket.select over a mix of tcp wrappers, udp wrappers and channel
-- receivers: whichever is ready is listed, the others are not.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

-- Which of the named objects a select result lists.
local function names(list, byobj)
  local out = {}
  for _, o in ipairs(list or {}) do out[#out + 1] = byobj[o] end
  table.sort(out)
  return out
end

describe("select over sockets and channels", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("lists only what became ready: channel, then tcp, then udp, then a timeout", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      local tx, rx = cosock.channel.new()
      local u = assert(socket.udp())
      assert(u:setsockname("127.0.0.1", 0))
      local _, uport = u:getsockname()
      local sender = assert(socket.udp())
      local byobj = { [c] = "tcp", [rx] = "chan", [u] = "udp" }
      local recvt = { c, rx, u }

      cosock.spawn(function() socket.sleep(0.01); tx:send("m") end, "chan sender")
      local a = pack(socket.select(recvt, nil, net.TIMEOUT))
      r.chan = names(a[1], byobj); r.chan_err = a[3]
      assert.equal("m", rx:receive())

      cosock.spawn(function() socket.sleep(0.01); assert(s:send("t")) end, "tcp sender")
      a = pack(socket.select(recvt, nil, net.TIMEOUT))
      r.tcp = names(a[1], byobj)
      assert.equal("t", c:receive(1))

      cosock.spawn(function()
        socket.sleep(0.01)
        assert(sender:sendto("d", "127.0.0.1", tonumber(uport)))
      end, "udp sender")
      a = pack(socket.select(recvt, nil, net.TIMEOUT))
      r.udp = names(a[1], byobj)
      assert.equal("d", u:receive())

      r.timeout = pack(socket.select(recvt, nil, 0.01))
      c:close(); s:close(); u:close(); sender:close()
    end, "selector")
    net.run()
    assert.same({ "chan" }, r.chan)
    assert.is_nil(r.chan_err)
    assert.same({ "tcp" }, r.tcp)
    assert.same({ "udp" }, r.udp)
    assert.same({ n = 3, nil, nil, "timeout" }, r.timeout)
  end)

  it("objects ready at once are all listed, each once", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      local tx, rx = cosock.channel.new()
      tx:send(1); tx:send(2)       -- already queued: the waker is called at once
      assert(s:send("x"))
      socket.sleep(0.01)           -- let the byte arrive
      r = pack(socket.select({ rx, c }, nil, net.TIMEOUT))
      r.names = names(r[1], { [c] = "tcp", [rx] = "chan" })
      c:close(); s:close()
    end, "selector")
    net.run()
    assert.same({ "chan", "tcp" }, r.names)
    assert.equal(2, #r[1])
    assert.is_nil(r[3])
  end)

  it("recvt and sendt together: a writable socket is listed in sendr", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      local _, rx = cosock.channel.new()
      r = pack(socket.select({ rx }, { c }, net.TIMEOUT))
      r.sendr_is_c = r[2] and rawequal(r[2][1], c)
      c:close(); s:close()
    end, "selector")
    net.run()
    assert.is_nil(r[1])
    assert.equal(1, #r[2])
    assert.is_true(r.sendr_is_c)
    assert.is_nil(r[3])
  end)

  it("a channel closed while a task selects on it wakes the task", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      local tx, rx = cosock.channel.new()
      cosock.spawn(function() socket.sleep(0.01); tx:close() end, "closer")
      r = pack(socket.select({ c, rx }, nil, net.TIMEOUT))
      r.is_rx = r[1] and rawequal(r[1][1], rx)
      r.recv = pack(rx:receive())
      c:close(); s:close()
    end, "selector")
    net.run()
    assert.is_true(r.is_rx)
    assert.same({ n = 2, nil, "closed" }, r.recv)
  end)
end)
