-- The wrappers' calls that take a host name look it up in the loop first:
-- tcp connect and bind, udp sendto, setpeername and setsockname, and so
-- socket.connect, socket.bind and a TLS connection. Numeric addresses never
-- reach the resolver. Servers and names on 127.0.0.1 / ::1 only.

local cosock = require "cosock"
local core = require "cosock.core"
local net = require "spec.support.net"
local dns_server = require "spec.support.dns_server"

local socket = cosock.socket
local pack = net.pack
local session = dns_server.session

local G_NONAME = "host or service not provided, or not known"

if core.dns ~= "c-ares" then
  describe("wrapper calls with a host name, without c-ares", function()
    before_each(function() cosock.reset() end)
    after_each(function() net.check_clean() end)
    it("hand the name to LuaSocket, which resolves it (blocking)", function()
      local r
      cosock.spawn(function()
        local l, port = net.listen()
        local c = socket.tcp()
        c:settimeout(net.TIMEOUT)
        r = pack(c:connect("localhost", port))
        c:close()
        l:close()
      end, "connect")
      net.run()
      assert.same({ n = 1, 1 }, r)
    end)
  end)
  return
end

local ZONE = {
  ["v4.test"] = { a = { "127.0.0.1" } },
  ["v6.test"] = { aaaa = { "::1" } },
  ["both.test"] = { a = { "127.0.0.1" }, aaaa = { "::1" } },
}

describe("wrapper calls with a host name", function()
  before_each(function()
    cosock.reset()
    assert(cosock.socket.dns.configure { servers = { dns_server.NOWHERE } })
  end)
  after_each(function()
    net.check_clean()
    assert.equal(0, core.dns_stats().lookups)
  end)

  it("tcp connect looks the name up, then connects", function()
    local r = {}
    session(ZONE, function(srv)
      local l, port = net.listen()
      local c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r.connect = pack(c:connect("v4.test", port))
      r.class = c.class
      r.peer = pack(c:getpeername())
      local s = l:accept()
      c:send("hi\n")
      r.got = s:receive()
      c:close(); s:close(); l:close()
      r.asked = srv:count("v4.test")
    end)
    assert.same({ n = 1, 1 }, r.connect)
    assert.equal("tcp{client}", r.class)
    assert.equal("127.0.0.1", r.peer[1])
    assert.equal("hi", r.got)
    assert.is_true(r.asked >= 1)
  end)

  it("tcp connect tries each address in turn (IPv6 and IPv4, one listening)", function()
    local r = {}
    session(ZONE, function()
      -- A server on 127.0.0.1 only, then one on ::1 only, on the same port
      -- number: whichever family comes first, the connect finds the listener.
      local l, port = net.listen()
      local c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r.v4 = pack(c:connect("both.test", port))
      r.peer4 = c:getpeername()
      c:close()
      l:close()
      local l6 = assert(socket.tcp6())
      assert(l6:bind("::1", 0))
      assert(l6:listen(4))
      local _, port6 = l6:getsockname()
      c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r.v6 = pack(c:connect("both.test", port6))
      r.peer6 = c:getpeername()
      c:close()
      l6:close()
    end)
    assert.same({ n = 1, 1 }, r.v4)
    assert.equal("127.0.0.1", r.peer4)
    assert.same({ n = 1, 1 }, r.v6)
    assert.equal("::1", r.peer6)
  end)

  it("a socket with a family only takes addresses of that family", function()
    local r = {}
    session(ZONE, function()
      local l, port = net.listen()
      local c = assert(socket.tcp4())
      c:settimeout(net.TIMEOUT)
      r.v6name = pack(c:connect("v6.test", port))
      c:close()
      c = assert(socket.tcp4())
      c:settimeout(net.TIMEOUT)
      r.both = pack(c:connect("both.test", port))
      c:close()
      l:close()
    end)
    assert.same({ n = 2, nil, "No address associated with hostname" }, r.v6name)
    assert.same({ n = 1, 1 }, r.both)
  end)

  it("a failed lookup is the connect's error, LuaSocket's string", function()
    local r
    session(ZONE, function()
      local c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r = pack(c:connect("nx.test", 1))
      c:close()
    end)
    assert.same({ n = 2, nil, G_NONAME }, r)
  end)

  it("socket.connect and socket.bind take names", function()
    local r = {}
    session(ZONE, function()
      local l = assert(socket.bind("v4.test", 0))
      r.server = pack(l:getsockname())
      l:settimeout(net.TIMEOUT)
      local c = socket.connect("v4.test", r.server[2])
      r.client = c and c.class
      local s = l:accept()
      r.accepted = s and s.class
      c:close(); s:close(); l:close()
      r.nx = pack(socket.connect("nx.test", 1))
      r.nxbind = pack(socket.bind("nx.test", 0))
    end)
    assert.equal("127.0.0.1", r.server[1])
    assert.equal("tcp{client}", r.client)
    assert.equal("tcp{client}", r.accepted)
    assert.same({ n = 2, nil, G_NONAME }, r.nx)
    assert.same({ n = 2, nil, G_NONAME }, r.nxbind)
  end)

  it("tcp bind takes a name", function()
    local r
    session(ZONE, function()
      local t = socket.tcp()
      r = { pack(t:bind("v4.test", 0)), pack(t:getsockname()) }
      t:close()
    end)
    assert.same({ n = 1, 1 }, r[1])
    assert.equal("127.0.0.1", r[2][1])
  end)

  it("udp setsockname, setpeername and sendto take names", function()
    local r = {}
    session(ZONE, function()
      local a = socket.udp()
      a:settimeout(net.TIMEOUT)
      r.sockname = pack(a:setsockname("v4.test", 0))
      local _, aport = a:getsockname()
      local b = socket.udp()
      b:settimeout(net.TIMEOUT)
      r.sendto = pack(b:sendto("one", "v4.test", aport))
      r.got1 = pack(a:receivefrom())
      r.peername = pack(b:setpeername("v4.test", aport))
      r.class = b.class
      b:send("two")
      r.got2 = a:receive()
      r.nx = pack(socket.udp():sendto("x", "nx.test", aport))
      a:close(); b:close()
    end)
    assert.same({ n = 1, 1 }, r.sockname)
    assert.same({ n = 1, 3 }, r.sendto)
    assert.equal("one", r.got1[1])
    assert.equal("127.0.0.1", r.got1[2])
    assert.same({ n = 1, 1 }, r.peername)
    assert.equal("udp{connected}", r.class)
    assert.equal("two", r.got2)
    assert.same({ n = 2, nil, G_NONAME }, r.nx)
  end)

  it("numeric addresses and '*' never reach the resolver", function()
    local r = {}
    session(ZONE, function(srv)
      local started = core.dns_stats().started
      local l = assert(socket.bind("127.0.0.1", 0))
      local _, port = l:getsockname()
      local c = assert(socket.connect("127.0.0.1", port))
      c:close()
      local c6 = socket.tcp()
      c6:settimeout(net.TIMEOUT)
      c6:connect("::1", port)                        -- (refused: nothing on ::1)
      c6:close()
      local u = socket.udp()
      assert(u:setsockname("*", 0))
      assert(u:sendto("x", "127.0.0.1", port))
      assert(u:setpeername("127.0.0.1", port))
      assert(u:setpeername("*"))
      u:close()
      local t = socket.tcp()
      assert(t:bind("*", 0))
      t:close()
      l:close()
      r.started = core.dns_stats().started - started
      r.queries = srv.queries
    end)
    assert.equal(0, r.started)
    assert.equal(0, r.queries)
  end)

  it("takes as numeric exactly the IPv4 forms inet_aton takes (no trailing text) and IPv6", function()
    local numeric = core.dns_numeric
    for _, s in ipairs({ "127.0.0.1", "0.0.0.0", "255.255.255.255", "10.1.2.3", "1.22.199.250",
                         "010.0.0.1", "0x7f.0.0.1", "127.1", "1.2.3", "2130706433", "0.0.0.00" }) do
      assert.equal(4, numeric(s), s)
    end
    for _, s in ipairs({ "::1", "fe80::1%lo", "::ffff:127.0.0.1" }) do
      assert.equal(6, numeric(s), s)
    end
    for _, s in ipairs({ "256.0.0.1", "1.2.3.256", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4x", "1.2.3.4.5",
                         "1..2.3", "1.2.3.", ".1.2.3", "09.1.1.1", "1.2.3.0009", "", "localhost",
                         "1.2.3.4\n", "dns.test" }) do
      assert.is_false(numeric(s), s)
    end
    assert.is_false(numeric(127))
  end)

  it("localhost comes from /etc/hosts: no query", function()
    local r = {}
    session(ZONE, function(srv)
      local l, port = net.listen()
      local c = assert(socket.connect("localhost", port))
      r.peer = c:getpeername()
      c:close()
      l:close()
      r.queries = srv.queries
    end)
    assert.equal("127.0.0.1", r.peer)
    assert.equal(0, r.queries)
  end)

  it("the http client (asyncify) connects to a name through the resolver", function()
    local r = {}
    session(ZONE, function(srv)
      local l, port = net.listen()
      cosock.spawn(function()
        local s = l:accept()
        s:settimeout(net.TIMEOUT)
        repeat local line = s:receive() until line == "" or line == nil
        s:send("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
        s:close()
        l:close()
      end, "http server")
      r.res = pack(socket.http.request("http://v4.test:" .. port .. "/"))
      r.asked = srv:count("v4.test")
    end)
    assert.equal("ok", r.res[1])
    assert.equal(200, r.res[2])
    assert.is_true(r.asked >= 1)
  end)
end)

describe("a TLS connection to a name #luasec", function()
  local certs
  setup(function() certs = require("spec.support.certs").generate() end)
  teardown(function() certs.cleanup() end)
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("connects by name, then handshakes", function()
    local r = {}
    session(ZONE, function()
      local l, port = net.listen()
      cosock.spawn(function()
        local s = l:accept()
        local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
        r.server_hs = ss:dohandshake()
        ss:send("secret\n")
        ss:close()
        l:close()
      end, "tls server")
      local c = socket.tcp()
      c:settimeout(net.TIMEOUT)
      r.connect = pack(c:connect("v4.test", port))
      local sc = assert(cosock.ssl.wrap(c, certs.client_config()))
      r.client_hs = sc:dohandshake()
      r.got = sc:receive()
      sc:close()
    end)
    assert.same({ n = 1, 1 }, r.connect)
    assert.is_true(r.client_hs)
    assert.is_true(r.server_hs)
    assert.equal("secret", r.got)
  end)
end)
