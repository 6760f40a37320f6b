-- cosock.socket.udp wrappers: LuaSocket's udp API where a receive or send that
-- would block yields to the loop. 127.0.0.1 with ephemeral ports only.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

-- An unconnected udp wrapper bound to 127.0.0.1:<ephemeral>; returns it and its port.
local function bound()
  local u = assert(socket.udp())
  assert(u:setsockname("127.0.0.1", 0))
  u:settimeout(net.TIMEOUT)
  local _, port = u:getsockname()
  return u, tonumber(port)
end

describe("cosock.socket.udp", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("is a callable method table; class follows setpeername", function()
    assert.equal("table", type(socket.udp))
    local u = socket.udp()
    assert.is_true(rawequal(getmetatable(u).__index, socket.udp))
    assert.equal("udp{unconnected}", u.class)
    assert.equal("userdata", type(u.inner_sock))
    for _, name in ipairs { "close", "dirty", "getfamily", "getfd", "getoption", "getpeername",
      "getsockname", "receive", "receivefrom", "send", "sendto", "setfd", "setoption",
      "setpeername", "setsockname", "settimeout", "setwaker", "_wake" } do
      assert.equal("function", type(socket.udp[name]), name)
    end
    assert.equal(1, u:setpeername("127.0.0.1", 9))
    assert.equal("udp{connected}", u.class)
    assert(u:setpeername("*"))
    assert.equal("udp{unconnected}", u.class)
    assert.equal(1.0, u:settimeout(1))
    u:close()
    local u6 = socket.udp6()
    assert.equal("udp{unconnected}", u6.class)
    assert.equal("inet6", u6:getfamily())
    u6:close()
  end)

  it("sendto / receivefrom between two sockets; receivefrom waits for a later datagram", function()
    local r = {}
    cosock.spawn(function()
      local a, aport = bound()
      local b, bport = bound()
      cosock.spawn(function()
        socket.sleep(0.01)
        r.sent = pack(a:sendto("ping", "127.0.0.1", bport))
      end, "sender")
      r.got = pack(b:receivefrom())
      assert(b:sendto("pong", r.got[2], r.got[3]))
      r.reply = pack(a:receivefrom())
      r.aport = aport
      a:close(); b:close()
    end, "receiver")
    net.run()
    assert.same({ n = 1, 4 }, r.sent)
    assert.equal("ping", r.got[1])
    assert.equal("127.0.0.1", r.got[2])
    assert.equal(r.aport, tonumber(r.got[3]))
    assert.equal("pong", r.reply[1])
  end)

  it("connected send / receive, and receive(size) truncates like LuaSocket", function()
    local r = {}
    cosock.spawn(function()
      local a, aport = bound()
      local b, bport = bound()
      assert(a:setpeername("127.0.0.1", bport))
      assert(b:setpeername("127.0.0.1", aport))
      cosock.spawn(function()
        socket.sleep(0)
        r.sent = pack(a:send("hello world"))
      end, "sender")
      r.got = pack(b:receive(5))
      assert(b:send("back"))
      r.back = pack(a:receive())
      a:close(); b:close()
    end, "receiver")
    net.run()
    assert.same({ n = 1, 11 }, r.sent)
    assert.same({ n = 1, "hello" }, r.got)
    assert.same({ n = 1, "back" }, r.back)
  end)

  it("receive and receivefrom time out with nil, 'timeout' (0 at once, small values after waiting)", function()
    local r = {}
    cosock.spawn(function()
      local u = bound()
      u:settimeout(0)
      r.zero = pack(u:receive())
      r.zerofrom = pack(u:receivefrom())
      u:settimeout(0.02)
      r.small = pack(u:receive())
      r.smallfrom = pack(u:receivefrom())
      u:close()
    end, "waiter")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r.zero)
    assert.same({ n = 2, nil, "timeout" }, r.zerofrom)
    assert.same({ n = 2, nil, "timeout" }, r.small)
    assert.same({ n = 2, nil, "timeout" }, r.smallfrom)
  end)

  it("many datagrams from several tasks all arrive at one receiver", function()
    local N, got = 40, {}
    cosock.spawn(function()
      local b, bport = bound()
      for i = 1, N do
        cosock.spawn(function()
          local a = bound()
          socket.sleep(0)
          assert(a:sendto("d" .. i, "127.0.0.1", bport))
          a:close()
        end, "sender " .. i)
      end
      for _ = 1, N do
        local d = assert(b:receive())
        got[#got + 1] = d
      end
      b:close()
    end, "receiver")
    net.run()
    table.sort(got)
    local want = {}
    for i = 1, N do want[i] = "d" .. i end
    table.sort(want)
    assert.same(want, got)
  end)

  it("close leaves a task blocked in receive waiting; its timeout gives 'timeout'", function()
    local r
    cosock.spawn(function()
      local u = bound()
      u:settimeout(0.05)
      cosock.spawn(function() socket.sleep(0.01); u:close() end, "closer")
      r = pack(u:receive())
    end, "receiver")
    net.run()
    assert.same({ n = 2, nil, "timeout" }, r)
  end)

  it("with set_close_wakes(true), close wakes a task blocked in receive; it gets 'closed'", function()
    cosock.set_close_wakes(true)
    finally(function() cosock.set_close_wakes(false) end)
    local r
    cosock.spawn(function()
      local u = bound()
      cosock.spawn(function() socket.sleep(0.01); u:close() end, "closer")
      r = pack(u:receive())
    end, "receiver")
    net.run()
    assert.same({ n = 2, nil, "closed" }, r)
  end)

  it("sendto a closed port does not block the loop; later receive reports LuaSocket's error or times out", function()
    local r
    cosock.spawn(function()
      local u = bound()
      u:settimeout(0.05)
      assert(u:setpeername("127.0.0.1", net.dead_port()))
      r = { send = pack(u:send("x")) }
      r.recv = pack(u:receive())
      u:close()
    end, "sender")
    net.run()
    assert.same({ n = 1, 1 }, r.send)
    assert.is_nil(r.recv[1])
    assert.is_true(r.recv[2] == "connection refused" or r.recv[2] == "timeout")
  end)
end)
