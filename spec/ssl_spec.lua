-- cosock.ssl: LuaSec over cosock tcp wrappers. Certificates are generated at spec
-- time into a temporary directory (spec/support/certs.lua) and removed after.

local cosock = require "cosock"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"

local socket = cosock.socket
local pack = net.pack

describe("cosock.ssl #luasec", function()
  local certs

  setup(function() certs = certs_mod.generate() end)
  teardown(function() certs.cleanup() end)

  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  -- Inside a task: a TLS pair (client, server side), handshakes done.
  local function tls_pair(client_cfg)
    local c, s = net.pair()
    local sc = assert(cosock.ssl.wrap(c, client_cfg or certs.client_config()))
    local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
    sc:settimeout(net.TIMEOUT) -- (a tls wrapper does not take the tcp wrapper's)
    ss:settimeout(net.TIMEOUT)
    local tx, rx = cosock.channel.new()
    rx:settimeout(net.TIMEOUT)
    cosock.spawn(function() tx:send(pack(ss:dohandshake())) end, "server handshake")
    local client_hs = pack(sc:dohandshake())
    local server_hs = rx:receive()
    return sc, ss, client_hs, server_hs
  end

  it("wrap gives a tls{} wrapper around LuaSec's object; the module carries LuaSec's functions", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      local w = assert(cosock.ssl.wrap(c, certs.client_config()))
      r.class = w.class
      r.inner = tostring(w.inner_sock)
      r.timeout = w.timeout
      r.tcp_fd = c:getfd()
      r.fd = w:getfd()
      w:close(); s:close()
    end, "wrap")
    net.run()
    assert.equal("tls{}", r.class)
    assert.matches("^SSL connection", r.inner)
    assert.is_nil(r.timeout)              -- not taken from the tcp wrapper, as in cosock
    assert.equal(-1, r.tcp_fd)            -- LuaSec took the fd
    assert.is_true(r.fd >= 0)
    local luasec = require "ssl"
    assert.equal(luasec.newcontext, cosock.ssl.newcontext)
    assert.equal(luasec.loadcertificate, cosock.ssl.loadcertificate)
  end)

  it("handshakes (verifying the generated CA) and moves 1 MiB each way", function()
    local N = 1024 * 1024
    local up, down = net.pattern(N), net.pattern(N):reverse()
    local r = {}
    cosock.spawn(function()
      local sc, ss, chs, shs = tls_pair()
      r.chs, r.shs = chs, shs
      cosock.spawn(function()
        r.server_got = ss:receive(N)
        r.server_sent = pack(ss:send(down))
        r.server_tail = pack(ss:receive("*a"))
        ss:close()
      end, "server")
      r.client_sent = pack(sc:send(up))
      r.client_got = sc:receive(N)
      r.verified = pack(sc:getpeerverification())
      r.cert = sc:getpeercertificate()
      sc:close()
    end, "client")
    net.run()
    assert.same({ n = 1, true }, r.chs)
    assert.same({ n = 1, true }, r.shs)
    assert.same({ n = 3, N }, r.client_sent)       -- LuaSec's send: n, nil, nil
    assert.same({ n = 3, N }, r.server_sent)
    assert.is_true(r.server_got == up)
    assert.is_true(r.client_got == down)
    assert.is_true(r.verified[1])
    assert.is_not_nil(r.cert)
    assert.same({ n = 1, "" }, r.server_tail) -- peer closed: "*a" gives what came
  end)

  it("lines sent one byte at a time arrive whole", function()
    local r
    cosock.spawn(function()
      local sc, ss = tls_pair()
      cosock.spawn(function() net.trickle(ss, "over tls\n") end, "trickler")
      r = pack(sc:receive())
      sc:close(); ss:close()
    end, "client")
    net.run()
    assert.same({ n = 1, "over tls" }, r)
  end)

  it("a timed-out wait reports 'wantread' (cosock's quirk), also with timeout 0, keeping partial data", function()
    local r = {}
    cosock.spawn(function()
      local sc, ss = tls_pair()
      sc:settimeout(0)
      r.zero = pack(sc:receive())
      assert(ss:send("part"))
      sc:settimeout(0.05)
      r.small = pack(sc:receive("*l"))
      sc:close(); ss:close()
    end, "client")
    net.run()
    assert.same({ n = 3, nil, "wantread", "" }, r.zero)
    assert.same({ n = 3, nil, "wantread", "part" }, r.small)
  end)

  it("a receive right after a send that times out also reports 'wantread'", function()
    local r = {}
    cosock.spawn(function()
      local sc, ss = tls_pair()
      sc:settimeout(0.05)
      -- a first read, so that nothing the handshake left behind is buffered
      r.before = pack(sc:receive("*l")) -- nothing sent yet: times out
      assert(sc:send("question\n"))
      r.after_send = pack(sc:receive("*l", "pre"))
      assert(sc:send("again\n"))
      r.no_prefix = pack(sc:receive("*l"))
      assert.equal("question", ss:receive("*l"))
      sc:close(); ss:close()
    end, "client")
    net.run()
    assert.same({ n = 3, nil, "wantread", "" }, r.before)
    assert.same({ n = 3, nil, "wantread", "pre" }, r.after_send)
    assert.same({ n = 3, nil, "wantread", "" }, r.no_prefix) -- LuaSec's partial, not nil
  end)

  -- LuaSec's dohandshake on a closed object crashes the process (SIGSEGV).
  -- A server handshake (the client never speaks) with timeout tmo, closed by
  -- another task during its wait; then a handshake on the closed wrapper.
  local function handshake_closed_under(tmo)
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
      ss:settimeout(tmo)
      cosock.spawn(function() socket.sleep(0.01); ss:close() end, "closer")
      r.during = pack(ss:dohandshake())
      r.after = pack(ss:dohandshake())
      c:close()
    end, "server")
    net.run()
    return r
  end

  -- LuaSec's dohandshake on a closed object crashes the process (SIGSEGV).
  it("a handshake closed under it by another task waits for its timeout (false, 'timeout'); on a closed wrapper it gives nil, 'closed'", function()
    local r = handshake_closed_under(0.05)
    assert.same({ n = 2, false, "timeout" }, r.during)
    assert.same({ n = 2, nil, "closed" }, r.after)
  end)

  it("with set_close_wakes(true), a handshake closed by another task during its wait gives nil, 'closed'", function()
    cosock.set_close_wakes(true)
    finally(function() cosock.set_close_wakes(false) end)
    local r = handshake_closed_under(net.TIMEOUT)
    assert.same({ n = 2, nil, "closed" }, r.during)
    assert.same({ n = 2, nil, "closed" }, r.after)
  end)

  it("a handshake against a peer that does not trust us fails with false, err (LuaSec's values, as on cosock; not an error)", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      -- client without the CA: verification of the server must fail
      local sc = assert(cosock.ssl.wrap(c, { mode = "client", protocol = "any",
        verify = "peer", options = "all" }))
      local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
      sc:settimeout(net.TIMEOUT)
      ss:settimeout(net.TIMEOUT)
      cosock.spawn(function() ss:dohandshake(); ss:close() end, "server")
      r = pack(sc:dohandshake())
      sc:close()
    end, "client")
    net.run()
    assert.equal(2, r.n)
    assert.is_false(r[1])
    assert.equal("string", type(r[2]))
    assert.matches("certificate", r[2])
  end)

  -- OpenSSL 3 says "unexpected eof while reading" when the peer's TCP stream
  -- ends without a TLS close_notify; for a reader that is the peer closing.
  it("a peer gone without close_notify reads as 'closed'; '*a' returns what came", function()
    local r = {}
    cosock.spawn(function()
      for _, pattern in ipairs({ "*l", "*a" }) do
        local sc, ss = tls_pair()
        assert(ss:send("no newline"))
        -- End the server's TCP stream under TLS, through a borrowed LuaSocket
        -- client object (only those have shutdown).
        local c2, s2 = net.pair()
        local raw = c2.inner_sock
        local own = raw:getfd()
        raw:setfd(ss:getfd())
        assert(raw:shutdown("send"))
        raw:setfd(own)
        c2:close(); s2:close()
        r[pattern] = pack(sc:receive(pattern))
        sc:close(); ss:close()
      end
    end, "client")
    net.run()
    assert.same({ n = 3, nil, "closed", "no newline" }, r["*l"])
    assert.same({ n = 1, "no newline" }, r["*a"])
  end)

  it("with set_close_wakes(true), close from another task wakes a task blocked in receive", function()
    cosock.set_close_wakes(true)
    finally(function() cosock.set_close_wakes(false) end)
    local r
    cosock.spawn(function()
      local sc, ss = tls_pair()
      cosock.spawn(function() socket.sleep(0.01); sc:close() end, "closer")
      r = pack(sc:receive())
      ss:close()
    end, "client")
    net.run()
    assert.is_nil(r[1])
    assert.equal("closed", r[2])
  end)

  it("a tls wrapper works in select", function()
    local r
    cosock.spawn(function()
      local sc, ss = tls_pair()
      cosock.spawn(function() socket.sleep(0.01); assert(ss:send("x\n")) end, "sender")
      r = pack(socket.select({ sc }, nil, net.TIMEOUT))
      r.line = sc:receive()
      sc:close(); ss:close()
    end, "client")
    net.run()
    assert.is_true(r[1] ~= nil and r[1][1] ~= nil and r[1][1].class == "tls{}")
    assert.is_nil(r[3])
    assert.equal("x", r.line)
  end)
end)
