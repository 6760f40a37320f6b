-- The values the socket wrappers' Lua methods return, compared with cosock
-- 0.2.0 (which passes LuaSocket's and LuaSec's through): the same count and
-- the same number subtype. Also the waker protocol's errors and warning, ssl.wrap
-- and udp calls on a closed wrapper. (Found with scripts/differential.sh.)

local cosock = require "cosock"
local luasocket = require "socket"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"
local L = require "spec.support.loop"
local V = require "spec.support.version"

local socket = cosock.socket
local pack = net.pack

-- pack(...) with each number replaced by its math.type, to compare subtypes.
local function kinds(...)
  local t = pack(...)
  for i = 1, t.n do
    if type(t[i]) == "number" then t[i] = V.describe(t[i]) end
  end
  return t
end

describe("socket wrappers return what cosock 0.2.0 returns", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("tcp and udp close return LuaSocket's single 1.0, also when closed twice", function()
    local t = socket.tcp()
    assert.same({ n = 1, V.float("1.0") }, kinds(t:close()))
    assert.same({ n = 1, V.float("1.0") }, kinds(t:close()))
    local u = socket.udp()
    assert.same({ n = 1, V.float("1.0") }, kinds(u:close()))
    local s = assert(socket.bind("127.0.0.1", 0))
    assert.same({ n = 1, V.float("1.0") }, kinds(s:close()))
  end)

  it("connect that waited returns LuaSocket's float 1.0", function()
    local r
    cosock.spawn(function()
      local srv, port = net.listen()
      local c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r = kinds(c:connect("127.0.0.1", port))
      local a = assert(srv:accept())
      a:close(); c:close(); srv:close()
    end, "connector")
    net.run()
    assert.same({ n = 1, V.float("1.0") }, r)
  end)

  describe("tls #luasec", function()
    local certs
    setup(function() certs = certs_mod.generate() end)
    teardown(function() certs.cleanup() end)

    it("settimeout and close return nothing; the tcp wrapper's timeout is not carried over", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        local w = assert(cosock.ssl.wrap(c, certs.client_config()))
        r.timeout = w.timeout
        r.set = pack(w:settimeout(1))
        r.set_mode = pack(w:settimeout(1, "t"))
        r.close = pack(w:close())
        r.close_again = pack(w:close())
        s:close()
      end, "tls")
      net.run()
      assert.is_nil(r.timeout)
      assert.same({ n = 0 }, r.set)
      assert.same({ n = 0 }, r.set_mode)
      assert.same({ n = 0 }, r.close)
      assert.same({ n = 0 }, r.close_again)
    end)

    it("wrap of something without an inner socket fails as cosock's does", function()
      local cfg = certs.client_config()
      assert.matches("^[^\n]*cosock/ssl%.lua:%d+: tcp inner_sock is null$",
        net.error_of(function() cosock.ssl.wrap({}, cfg) end))
      assert.matches("^[^\n]*cosock/ssl%.lua:%d+: tcp inner_sock is null$",
        net.error_of(function() cosock.ssl.wrap("str", cfg) end))
      -- (Lua's own message, worded differently before 5.3)
      assert.matches(V.integers and "attempt to index a nil value (local 'tcp_socket')"
        or "attempt to index local 'tcp_socket' (a nil value)",
        net.error_of(function() cosock.ssl.wrap(nil, cfg) end), 1, true)
    end)
  end)

  describe("the waker protocol by hand", function()
    for _, kind in ipairs { "tcp", "udp" } do
      it(kind .. ": setwaker's errors carry wrap.lua's position, as cosock's assert gives them", function()
        local w = socket[kind]()
        w:setwaker("recvr", function() end)
        assert.matches("^[^\n]*cosock/socket/wrap%.lua:%d+: recvr waker already set, sockets can only block one thread per waker kind$",
          net.error_of(function() w:setwaker("recvr", function() end) end))
        assert.matches("^[^\n]*cosock/socket/wrap%.lua:%d+: unsupported wake kind: other$",
          net.error_of(function() w:setwaker("other", function() end) end))
        w:setwaker("recvr", nil)
        w:close()
      end)

      it(kind .. ": _wake without a waker prints cosock's warning and returns false", function()
        local w = socket[kind]()
        local out, ok, res = L.capture(function() return w:_wake("recvr") end)
        assert.is_true(ok)
        assert.is_false(res)
        assert.equal("warning attempt to wake, but no waker set\n", out)
        local calls = 0
        w:setwaker("sendr", function() calls = calls + 1 end)
        out, ok, res = L.capture(function() return w:_wake("sendr") end)
        assert.equal("", out)
        assert.is_true(res)
        assert.equal(1, calls)
        w:close()
      end)
    end
  end)

  it("udp calls on a wrapper already closed give LuaSocket's own values", function()
    local function closed_pair()
      local raw = luasocket.udp()
      local w = socket.udp()
      raw:close()
      w:close()
      return raw, w
    end
    local raw, w = closed_pair()
    assert.same({ n = 1, "" }, pack(w:receive())) -- (not nil, "closed")
    assert.same(pack(raw:receive()), pack(w:receive()))
    assert.same(pack(raw:receivefrom()), pack(w:receivefrom()))
    -- (LuaSocket's sendto makes the closed object a new socket: last)
    assert.same(pack(raw:sendto("x", "127.0.0.1", 9)), pack(w:sendto("x", "127.0.0.1", 9)))
    raw:close()
    w:close()
  end)
end)
