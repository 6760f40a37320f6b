-- Regression: what a failed TLS handshake returns. cosock passes LuaSec's own
-- failure through (false and the reason), and a handshake whose wait timed
-- out returns false, "timeout" (its "wantread"/"wantwrite" quirk is only its
-- receive's and send's). cosock-native returned nil, err, and nil, "wantread"
-- for the timeout: a driver that logged the reason, or tested the first
-- value against nil, saw something else than on cosock. Found by running
-- LuaSec's ssl.https and the drivers' socket builders against both
-- (scripts/real-clients/asyncify_https.lua).

local cosock = require "cosock"
local net = require "spec.support.net"
local certs = require "spec.support.certs"

local socket = cosock.socket
local pack = net.pack

describe("regress: a failed TLS handshake returns cosock's values #luasec", function()
  local c_
  setup(function() c_ = certs.generate() end)
  teardown(function() c_.cleanup() end)
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  -- A client handshake against peer(s) on the other side of a fresh pair.
  local function handshake_against(peer, timeout)
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function() peer(s) s:close() end, "peer")
      local sc = assert(cosock.ssl.wrap(c, { mode = "client", protocol = "any", verify = "none" }))
      sc:settimeout(timeout)
      r = pack(sc:dohandshake())
      sc:close()
    end, "client")
    net.run()
    return r
  end

  it("a silent peer: false, 'timeout' when the wait times out", function()
    assert.same({ n = 2, false, "timeout" }, handshake_against(function() socket.sleep(0.2) end, 0.01))
  end)

  it("a zero timeout: false, 'timeout' after one pass", function()
    assert.same({ n = 2, false, "timeout" }, handshake_against(function() socket.sleep(0.05) end, 0))
  end)

  it("a peer that is not TLS: LuaSec's false and its reason", function()
    assert.same({ n = 2, false, "wrong version number" }, handshake_against(function(s)
      assert(s:receive(5))
      assert(s:send(("\0\1not tls\255"):rep(50)))
      socket.sleep(0.05)
    end, net.TIMEOUT))
  end)

  it("a server that does not trust the client's authority: false and the reason on both sides", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      local sc = assert(cosock.ssl.wrap(c, { mode = "client", protocol = "any", verify = "peer" }))
      local ss = assert(cosock.ssl.wrap(s, c_.server_config()))
      sc:settimeout(net.TIMEOUT)
      ss:settimeout(net.TIMEOUT)
      local tx, rx = cosock.channel.new()
      cosock.spawn(function() tx:send(pack(ss:dohandshake())) end, "server")
      r.client = pack(sc:dohandshake())
      sc:close()
      r.server = rx:receive()
      ss:close()
    end, "client")
    net.run()
    assert.same({ n = 2, false, "certificate verify failed" }, r.client)
    assert.equal(2, r.server.n)
    assert.is_false(r.server[1])
    assert.equal("string", type(r.server[2]))
  end)
end)
