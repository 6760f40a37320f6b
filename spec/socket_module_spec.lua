-- cosock.socket module functions: bind/connect, select and sleep quirks,
-- LuaSocket pass-throughs. (try/newtry/protect: socket_try_protect_spec.lua.)

local cosock = require "cosock"
local luasocket = require "socket"
local net = require "spec.support.net"
local V = require "spec.support.version"

local socket = cosock.socket
local pack = net.pack

describe("cosock.socket module", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("bind", function()
    it("returns a listening tcp{server} wrapper with reuseaddr set", function()
      local srv = assert(socket.bind("127.0.0.1", 0))
      assert.equal("tcp{server}", srv.class)
      assert.is_true(srv:getoption("reuseaddr"))
      assert.is_true(rawequal(getmetatable(srv).__index, socket.tcp))
      srv:close()
    end)

    it("returns nil, err when the address is taken", function()
      local srv = assert(socket.bind("127.0.0.1", 0))
      local _, port = srv:getsockname()
      local r = pack(socket.bind("127.0.0.1", port))
      assert.is_nil(r[1])
      assert.equal("address already in use", r[2])
      srv:close()
    end)
  end)

  describe("connect", function()
    it("connect / connect4 return a tcp{client} wrapper; locaddr/locport bind first", function()
      local r = {}
      cosock.spawn(function()
        local srv, port = net.listen()
        local c1 = assert(socket.connect("127.0.0.1", port))
        local c2 = assert(socket.connect4("127.0.0.1", port, "127.0.0.1", 0))
        r.c1, r.c2 = c1.class, c2.class
        r.loc = c2:getsockname()
        local a1, a2 = assert(srv:accept()), assert(srv:accept())
        a1:close(); a2:close(); c1:close(); c2:close(); srv:close()
      end, "connector")
      net.run()
      assert.equal("tcp{client}", r.c1)
      assert.equal("tcp{client}", r.c2)
      assert.equal("127.0.0.1", r.loc)
    end)

    it("returns nil, 'connection refused' for a closed port", function()
      local r
      cosock.spawn(function()
        r = pack(socket.connect("127.0.0.1", net.dead_port()))
      end, "connector")
      net.run()
      assert.same({ n = 2, nil, "connection refused" }, r)
    end)
  end)

  describe("select and sleep", function()
    it("select times out with exactly (nil, nil, 'timeout'); a zero or negative timeout on the next pass", function()
      local r = {}
      cosock.spawn(function()
        r.small = pack(socket.select(nil, nil, 0.01))
        r.zero = pack(socket.select(nil, nil, 0))
        r.neg = pack(socket.select({}, {}, -1))
      end, "selector")
      net.run()
      for _, k in ipairs { "small", "zero", "neg" } do
        assert.same({ n = 3, nil, nil, "timeout" }, r[k], k)
      end
    end)

    it("sleep returns nothing and lets other tasks run", function()
      local order, r = {}, nil
      cosock.spawn(function()
        order[#order + 1] = "a1"
        r = pack(socket.sleep(0))
        order[#order + 1] = "a2"
      end, "a")
      cosock.spawn(function() order[#order + 1] = "b" end, "b")
      net.run()
      assert.same({ n = 0 }, r)
      assert.same({ "a1", "b", "a2" }, order)
    end)

    it("sleep takes what select takes, as cosock's does: a numeric string, or nil for no limit", function()
      local r = {}
      local forever = cosock.spawn(function()
        r.before = true
        socket.sleep()
        r.after = true
      end, "forever")
      cosock.spawn(function()
        r.string = pack(socket.sleep("0.001"))
        socket.sleep(0.01)
        r.alive = forever:is_alive()
        forever:cancel()
      end, "sleeper")
      net.run()
      assert.same({ n = 0 }, r.string)
      assert.is_true(r.before)
      assert.is_true(r.alive)
      assert.is_nil(r.after)
    end)

    it("select outside a task raises (it yields)", function()
      local ok, err = pcall(socket.select, nil, nil, 0)
      assert.is_false(ok)
      assert.matches(V.WAIT_OUTSIDE, err, 1, true)
    end)

    it("a raw LuaSocket object in select is refused by the loop", function()
      local raw = luasocket.tcp()
      cosock.spawn(function() socket.select({ raw }, nil, 0.01) end, "raw")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.matches("non-wakeable socket", tostring(err), 1, true)
      raw:close()
    end)
  end)

  describe("pass-throughs", function()
    it("are LuaSocket's own", function()
      for _, k in ipairs { "gettime", "choose", "sink", "sinkt", "skip", "source",
        "sourcet", "_VERSION", "_SETSIZE", "BLOCKSIZE" } do
        assert.is_not_nil(socket[k], k)
        assert.equal(luasocket[k], socket[k], k)
      end
      -- dns is cosock's (spec/dns_spec.lua), with LuaSocket's functions.
      assert.is_true(rawequal(require "cosock.dns", socket.dns))
      for _, k in ipairs { "toip", "tohostname", "getaddrinfo", "getnameinfo", "gethostname" } do
        assert.equal("function", type(socket.dns[k]), k)
      end
      assert.equal("table", type(socket.tcp))
      assert.equal("table", type(socket.udp))
      assert.equal("function", type(socket.tcp6))
      assert.equal("function", type(socket.udp6))
      assert.equal("function", type(socket.connect6))
    end)

    it("http is LuaSocket's socket.http through asyncify, loaded on first use", function()
      local http = socket.http
      assert.equal("table", type(http))
      assert.equal("function", type(http.request))
      assert.is_true(rawequal(http, require "cosock.socket.http"))
      assert.is_true(rawequal(http, cosock.asyncify("socket.http")))
      assert.is_false(rawequal(http, require "socket.http"))
    end)
  end)
end)
