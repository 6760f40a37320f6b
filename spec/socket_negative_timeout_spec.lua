-- settimeout with a negative value on tcp, udp and tls wrappers: as in cosock
-- 0.2.0, a call that would wait fails at once with the timeout values (LuaSocket
-- itself reads a negative timeout as "no limit"), after the one yield cosock's
-- makes. Each case has a second task that makes the socket ready once the
-- calls returned (a go signal, not a time): a call that waited for the data
-- would never return, and run would end with the stall error.

local cosock = require "cosock"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"

local socket = cosock.socket
local pack = net.pack

-- The block timeout `t` (a "t" mode is cosock's block timeout too, unless
-- cosock.set_luasocket_timeouts(true)).
local function limit(w, t)
  w:settimeout(net.TIMEOUT, "t")
  w:settimeout(t)
end

describe("a negative wrapper timeout expires after one yield", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  for _, t in ipairs { -1, -0.5 } do
    it("tcp receive and accept (" .. t .. ")", function()
      local r = {}
      cosock.spawn(function()
        local srv, port = net.listen()
        local c, s = net.pair()
        local go_tx, go_rx = cosock.channel.new()
        cosock.spawn(function()
          go_rx:receive()
          c:send("late\n")
          local c2 = socket.tcp()
          c2:settimeout(net.TIMEOUT)
          assert(c2:connect("127.0.0.1", port))
          socket.sleep(0.01)
          c2:close()
        end, "late peer")
        limit(s, t)
        r.line = pack(s:receive())
        r.bytes = pack(s:receive(4))
        r.all = pack(s:receive("*a"))
        limit(srv, t)
        r.accept = pack(srv:accept())
        go_tx:send(true)
        s:settimeout(net.TIMEOUT)
        r.after = s:receive()
        srv:settimeout(net.TIMEOUT)
        local a = assert(srv:accept())
        a:close(); srv:close(); c:close(); s:close()
      end, "receiver")
      net.run()
      assert.same({ n = 3, nil, "timeout", "" }, r.line)
      assert.same({ n = 3, nil, "timeout", "" }, r.bytes)
      assert.same({ n = 3, nil, "timeout", "" }, r.all)
      assert.same({ n = 2, nil, "timeout" }, r.accept)
      assert.equal("late", r.after)
    end)

    it("udp receive and receivefrom (" .. t .. ")", function()
      local r = {}
      cosock.spawn(function()
        local u = socket.udp()
        assert(u:setsockname("127.0.0.1", 0))
        local ip, port = u:getsockname()
        local go_tx, go_rx = cosock.channel.new()
        cosock.spawn(function()
          go_rx:receive()
          local v = socket.udp()
          assert(v:sendto("late", ip, port))
          v:close()
        end, "late peer")
        limit(u, t)
        r.receive = pack(u:receive())
        r.receivefrom = pack(u:receivefrom())
        go_tx:send(true)
        u:settimeout(net.TIMEOUT)
        r.after = u:receive()
        u:close()
      end, "receiver")
      net.run()
      assert.same({ n = 2, nil, "timeout" }, r.receive)
      assert.same({ n = 2, nil, "timeout" }, r.receivefrom)
      assert.equal("late", r.after)
    end)
  end

  describe("tls #luasec", function()
    local certs
    setup(function() certs = certs_mod.generate() end)
    teardown(function() certs.cleanup() end)

    it("receive fails at once with LuaSec's wantread and partial ''", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        local sc = assert(cosock.ssl.wrap(c, certs.client_config()))
        local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
        sc:settimeout(net.TIMEOUT)
        ss:settimeout(net.TIMEOUT)
        local go_tx, go_rx = cosock.channel.new()
        cosock.spawn(function()
          assert(ss:dohandshake())
          go_rx:receive()
          ss:send("late\n")
        end, "server")
        assert(sc:dohandshake())
        limit(sc, -1)
        r.line = pack(sc:receive())
        r.bytes = pack(sc:receive(3))
        go_tx:send(true)
        sc:settimeout(net.TIMEOUT)
        r.after = sc:receive()
        sc:close(); ss:close()
      end, "client")
      net.run()
      assert.same({ n = 3, nil, "wantread", "" }, r.line)
      assert.same({ n = 3, nil, "wantread", "" }, r.bytes)
      assert.equal("late", r.after)
    end)
  end)
end)
