-- A wrapper's send returns what LuaSocket's (and LuaSec's) send returns, as
-- cosock 0.2.0 passes it: three values, the float index of the last byte
-- sent, nil, nil; on the direct write of LuaSocket tcp{client} objects
-- (src/luasocket_tcp.c) and on the path through the inner send alike.

local cosock = require "cosock"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"
local V = require "spec.support.version"

local pack = net.pack

local function kinds(t)
  local out = { n = t.n }
  for i = 1, t.n do
    local v = t[i]
    out[i] = type(v) == "number" and V.describe(v) or v
  end
  return out
end

describe("send returns LuaSocket's three values, as cosock 0.2.0 passes them", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("on tcp: whole data, with i, with i and j, empty", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      r.whole = kinds(pack(c:send("hello\n")))
      r.i = kinds(pack(c:send("0123456789", 3)))
      r.ij = kinds(pack(c:send("0123456789", 3, 5)))
      r.empty = kinds(pack(c:send("")))
      c:close(); s:close()
    end, "sender")
    net.run()
    assert.same({ n = 3, V.float("6.0"), nil, nil }, r.whole)
    assert.same({ n = 3, V.float("10.0"), nil, nil }, r.i)
    assert.same({ n = 3, V.float("5.0"), nil, nil }, r.ij)
    assert.same({ n = 3, V.float("0.0"), nil, nil }, r.empty)
  end)

  describe("on tls", function()
    local certs
    setup(function() certs = certs_mod.generate() end)
    teardown(function() certs.cleanup() end)

    it("returns the three values of LuaSec's send", function()
      local r
      cosock.spawn(function()
        local c, s = net.pair()
        local sc = assert(cosock.ssl.wrap(c, certs.client_config()))
        local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
        sc:settimeout(net.TIMEOUT)
        ss:settimeout(net.TIMEOUT)
        local done_tx, done_rx = cosock.channel.new()
        done_rx:settimeout(net.TIMEOUT)
        cosock.spawn(function() assert(ss:dohandshake()); done_tx:send(ss:receive()) end, "server")
        assert(sc:dohandshake())
        r = kinds(pack(sc:send("hello\n")))
        assert(done_rx:receive() == "hello")
        sc:close(); ss:close()
      end, "client")
      net.run()
      assert.same({ n = 3, V.float("6.0"), nil, nil }, r)
    end)
  end)
end)
