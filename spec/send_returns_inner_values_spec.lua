-- A wrapper's send returns every value the inner send returns, as cosock
-- 0.2.0 passes them: LuaSocket's (and LuaSec's) three, the float index of
-- the last byte sent, nil, nil, on the direct write of LuaSocket tcp{client}
-- objects (src/features/luasocket_tcp.c) and on the path through the inner
-- send alike; a fourth, the time the call took, from a debug build of
-- LuaSocket (LUASOCKET_DEBUG), on success and on failure, also after a wait.

local cosock = require "cosock"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"
local V = require "spec.support.version"

local pack = net.pack
local unpack = require("cosock.compat").unpack

-- A LuaSocket tcp{client} object as a debug build of LuaSocket has it: its
-- send returns one value more (there, the seconds the call took). The
-- wrapper waits on it like on any inner socket (its getfd, dirty, ...).
local function debug_build(real, fail)
  local proxy = {}
  setmetatable(proxy, { __index = function(_, k)
    local v = real[k]
    if type(v) ~= "function" then return v end
    return function(_, ...) return v(real, ...) end
  end })
  proxy.calls = 0
  function proxy.send(_, ...)
    proxy.calls = proxy.calls + 1
    if fail then return nil, "closed", 0, 0.25 end
    local r = pack(real:send(...))
    r[4] = 0.25
    return unpack(r, 1, 4)
  end
  return proxy
end

local function kinds(t)
  local out = { n = t.n }
  for i = 1, t.n do
    local v = t[i]
    out[i] = type(v) == "number" and V.describe(v) or v
  end
  return out
end

describe("send returns the inner send's values, as cosock 0.2.0 passes them", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("on tcp: whole data, with i, with i and j, empty", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      r.first = kinds(pack(c:send("hello\n")))  -- (through LuaSocket's method)
      r.whole = kinds(pack(c:send("hello\n")))  -- (the direct write, from then on)
      r.i = kinds(pack(c:send("0123456789", 3)))
      r.ij = kinds(pack(c:send("0123456789", 3, 5)))
      r.empty = kinds(pack(c:send("")))
      c:close(); s:close()
    end, "sender")
    net.run()
    assert.same({ n = 3, V.float("6.0"), nil, nil }, r.first)
    assert.same({ n = 3, V.float("6.0"), nil, nil }, r.whole)
    assert.same({ n = 3, V.float("10.0"), nil, nil }, r.i)
    assert.same({ n = 3, V.float("5.0"), nil, nil }, r.ij)
    assert.same({ n = 3, V.float("0.0"), nil, nil }, r.empty)
  end)

  describe("on tls #luasec", function()
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

  describe("from a debug build of LuaSocket (four values)", function()
    local tcp = require "cosock.socket.tcp"

    it("on success, each time (never the three of the direct write)", function()
      local r, proxy = {}, nil
      cosock.spawn(function()
        local c, s = net.pair()
        proxy = debug_build(c.inner_sock)
        local w = tcp._from_inner(proxy)
        w:settimeout(net.TIMEOUT)
        r.first = pack(w:send("hello\n"))
        r.second = pack(w:send("hello\n"))
        r.ij = pack(w:send("0123456789", 3, 5))
        assert.equal("hello", s:receive())
        w:close(); s:close()
      end, "sender")
      net.run()
      assert.same({ n = 4, 6, nil, nil, 0.25 }, r.first)
      assert.same({ n = 4, 6, nil, nil, 0.25 }, r.second)
      assert.same({ n = 4, 5, nil, nil, 0.25 }, r.ij)
      assert.equal(3, proxy.calls)
    end)

    it("after waits for the rest: the last try's", function()
      local r, got
      local data = net.pattern(4 * 1024 * 1024)
      cosock.spawn(function()
        local c, s = net.pair()
        local w = tcp._from_inner(debug_build(c.inner_sock))
        w:settimeout(net.TIMEOUT)
        cosock.spawn(function() got = s:receive(#data); s:close() end, "reader")
        r = pack(w:send(data))
        w:close()
      end, "sender")
      net.run()
      assert.same({ n = 4, #data, nil, nil, 0.25 }, r)
      assert.equal(#data, got and #got)
      assert.is_true(got == data)
    end)

    it("on failure: nil, the error, the last byte sent and the time", function()
      local r
      cosock.spawn(function()
        local c, s = net.pair()
        local w = tcp._from_inner(debug_build(c.inner_sock, true))
        r = pack(w:send("hello\n"))
        w:close(); s:close()
      end, "sender")
      net.run()
      assert.same({ n = 4, nil, "closed", 0, 0.25 }, r)
    end)
  end)
end)
