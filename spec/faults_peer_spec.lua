-- Resource faults from the peer: a connection reset in the middle of a large
-- send, and TLS peers that send garbage, close during the handshake or stay
-- silent. Each call ends with a clear error within its time limit, and the
-- loop is empty and works afterwards.

local cosock = require "cosock"
local net = require "spec.support.net"
local L = require "spec.support.loop"

local socket = cosock.socket
local pack = net.pack

describe("a peer that resets the connection", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("in the middle of a 16 MiB send: send gives nil, 'closed' and how much went, and so do later calls", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function()
        r.peer_got = #assert(s:receive(1000))
        assert(s.inner_sock:setoption("linger", { on = true, timeout = 0 }))
        s:close()                              -- linger 0: the close sends a reset
      end, "resetter")
      r.send = pack(c:send(("x"):rep(16 * 1024 * 1024)))
      r.again = pack(c:send("more"))
      r.receive = pack(c:receive())
      c:close()
    end, "sender")
    net.run()
    assert.equal(1000, r.peer_got)
    assert.equal(3, r.send.n)
    assert.is_nil(r.send[1])
    assert.equal("closed", r.send[2])
    assert.is_true(r.send[3] >= 1000 and r.send[3] < 16 * 1024 * 1024, tostring(r.send[3]))
    assert.same({ n = 3, nil, "closed", 0 }, r.again)
    assert.same({ n = 3, nil, "closed", "" }, r.receive)
    L.assert_loop_works()
  end)
end)

describe("a TLS peer #luasec", function()
  local certs = require "spec.support.certs"
  local c_

  setup(function() c_ = certs.generate() end)
  teardown(function() c_.cleanup() end)
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  -- Runs peer(s) as the server side of a fresh pair while the client side
  -- does a TLS handshake with the given timeout; returns dohandshake's
  -- results.
  local function handshake_against(peer, timeout)
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function() peer(s) s:close() end, "peer")
      local sc = assert(cosock.ssl.wrap(c, c_.client_config()))
      sc:settimeout(timeout)
      r.hs = pack(sc:dohandshake())
      sc:close()
    end, "client")
    net.run()
    return r
  end

  it("that answers the hello with garbage: the handshake fails with OpenSSL's reason", function()
    local r = handshake_against(function(s)
      assert(s:receive(5))                     -- the hello's record header
      assert(s:send(("\0\1not tls\255"):rep(50)))
      socket.sleep(0.05)
    end, 2)
    assert.same({ n = 2, false, "wrong version number" }, r.hs) -- LuaSec's false, as on cosock
    L.assert_loop_works()
  end)

  it("that closes in the middle of the handshake: the handshake fails with the end of stream, not a timeout", function()
    local r = handshake_against(function(s)
      assert(s:receive(5))
    end, net.TIMEOUT)
    assert.same({ n = 2, false, "unexpected eof while reading" }, r.hs)
    L.assert_loop_works()
  end)

  it("that stays silent: the handshake gives up at its timeout with cosock's false, 'timeout'", function()
    local r = handshake_against(function() socket.sleep(0.3) end, 0.05)
    assert.same({ n = 2, false, "timeout" }, r.hs)
    L.assert_loop_works()
  end)
end)
