-- cosock.socket.dns (cosock.dns): LuaSocket's socket.dns, with lookups that wait
-- in the loop (c-ares). Every lookup goes to a DNS server the spec starts on
-- 127.0.0.1 (spec/support/dns_server.lua) or to /etc/hosts; none reaches the
-- system's servers. Built without c-ares, the last block checks the fallback.

local cosock = require "cosock"
local core = require "cosock.core"
local luasocket = require "socket"
local net = require "spec.support.net"
local dns_server = require "spec.support.dns_server"

local dns = cosock.socket.dns
local pack = net.pack
local session = dns_server.session

-- The system strings LuaSocket returns for these (glibc's hstrerror and
-- gai_strerror); LuaSocket's own where it has one.
local H_NOT_FOUND = "host not found"
local H_TRY_AGAIN = "Host name lookup failure"
local H_NO_RECOVERY = "Unknown server error"
local H_NO_DATA = "No address associated with name"
local G_NONAME = "host or service not provided, or not known"
local G_AGAIN = "temporary failure in name resolution"
local G_FAIL = "non-recoverable failure in name resolution"
local G_NODATA = "No address associated with hostname"

local ZONE = {
  ["host.test"] = { a = { "127.0.0.1" }, aaaa = { "::1" } },
  ["v4.test"] = { a = { "127.0.0.1" } },
  ["v6only.test"] = { aaaa = { "::1" } },
  ["empty.test"] = {},
  ["servfail.test"] = { rcode = "servfail" },
  ["refused.test"] = { rcode = "refused" },
  ["drop.test"] = { drop = true },
  ["tc.test"] = { a = { "127.0.0.1" }, tc = true },
  ["short.test"] = { garbage = "short" },
  ["otherid.test"] = { garbage = "id" },
  ["badbody.test"] = { garbage = "body" },
  ["1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa"] = { ptr = "six.test" },
}

local function sorted_addrs(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = e.family .. " " .. e.addr end
  table.sort(out)
  return out
end

-- The first name the hosts file gives the address addr, or nil (a machine's
-- /etc/hosts may or may not list ::1: a fresh Debian's does, as localhost).
local function hosts_name(addr)
  local f = io.open("/etc/hosts")
  if not f then return nil end
  for line in f:lines() do
    local a, name = line:gsub("#.*", ""):match("^%s*(%S+)%s+(%S+)")
    if a == addr then
      f:close()
      return name
    end
  end
  f:close()
  return nil
end

if core.dns ~= "c-ares" then
  describe("cosock.socket.dns without c-ares", function()
    before_each(function() cosock.reset() end)
    after_each(function() net.check_clean() end)

    it("is LuaSocket's resolver, and says so", function()
      assert.equal("luasocket", core.dns)
      assert.equal("luasocket", dns.resolver)
      assert.equal(luasocket.dns.gethostname, dns.gethostname)
      local r
      cosock.spawn(function() r = pack(dns.toip("localhost")) end, "toip")
      net.run()
      assert.equal("127.0.0.1", r[1])
      assert.same({ "127.0.0.1" }, r[2].ip)
    end)

    it("setservers and configure say that they cannot apply", function()
      local ok, err = dns.setservers { "127.0.0.1:5353" }
      assert.is_nil(ok)
      assert.matches("built without c%-ares", err)
      ok, err = dns.configure { timeout = 1 }
      assert.is_nil(ok)
      assert.matches("built without c%-ares", err)
    end)
  end)
  return
end

describe("examples/dns_lookup.lua", function()
  it("prints what its header says", function()
    local lua = require "spec.support.interpreter"
    local cmd = string.format("LUA_PATH=%q LUA_CPATH=%q %s examples/dns_lookup.lua 2>&1",
      package.path, package.cpath, lua)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    assert.equal(table.concat({
      "resolver: c-ares",
      "localhost -> 127.0.0.1 (from /etc/hosts)",
      "echo.example.test -> inet 127.0.0.1",
      "tick 1", "tick 2", "tick 3",
      "slow.example.test -> 127.0.0.1 (answered after 3 ticks of another task)",
      "connected to echo.example.test: HELLO",
      "with a 50 ms timeout: nil timeout",
      "nosuch.example.test: nil host or service not provided, or not known",
    }, "\n") .. "\n", out)
  end)
end)

describe("cosock.socket.dns", function()
  before_each(function()
    cosock.reset()
    assert(dns.configure { servers = { dns_server.NOWHERE } })
  end)
  after_each(function()
    net.check_clean()
    collectgarbage()
    collectgarbage()
    local s = core.dns_stats()
    assert.equal(0, s.lookups, "lookups in flight")
    assert.equal(0, s.objects, "lookup objects not collected")
    assert.equal(0, s.fds, "resolver sockets open")
  end)

  it("is cosock's, with c-ares", function()
    assert.equal("c-ares", core.dns)
    assert.equal("c-ares", dns.resolver)
    assert.matches("^%d+%.%d+%.%d+$", core.dns_version)
    assert.equal(luasocket.dns.gethostname, dns.gethostname)
  end)

  describe("gives LuaSocket's results:", function()
    it("toip and tohostname: the first address, and {name, alias, ip}", function()
      local r = {}
      session(ZONE, function()
        r.toip = pack(dns.toip("v4.test"))
        r.toname = pack(dns.tohostname("v4.test"))
        r.number = pack(dns.toip("v4.test"))
      end)
      assert.equal("127.0.0.1", r.toip[1])
      assert.same({ name = "v4.test", alias = {}, ip = { "127.0.0.1" } }, r.toip[2])
      assert.equal("v4.test", r.toname[1])
      assert.same({ name = "v4.test", alias = {}, ip = { "127.0.0.1" } }, r.toname[2])
    end)

    it("getaddrinfo: {family, addr} for every address, both families", function()
      local r
      session(ZONE, function() r = pack(dns.getaddrinfo("host.test")) end)
      assert.equal(1, r.n)
      assert.same({ "inet 127.0.0.1", "inet6 ::1" }, sorted_addrs(r[1]))
      for _, e in ipairs(r[1]) do
        local keys = {}
        for k in pairs(e) do keys[#keys + 1] = k end
        table.sort(keys)
        assert.same({ "addr", "family" }, keys)
      end
    end)

    it("getnameinfo: the name of each address (reverse lookups) and the service", function()
      local r = {}
      session(ZONE, function(srv)
        r.both = pack(dns.getnameinfo("host.test", "http"))
        r.host = pack(dns.getnameinfo("host.test"))
        r.serv = pack(dns.getnameinfo(nil, "80"))
        r.ptr = srv:count("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa")
      end)
      -- 127.0.0.1 is localhost in /etc/hosts. ::1 is too where the hosts file
      -- lists it (Debian's own does), else it is asked as PTR of the server.
      local six = hosts_name("::1")
      local names = r.both[1]
      table.sort(names)
      assert.same({ "localhost", six or "six.test" }, names)
      assert.equal("http", r.both[2])
      assert.equal(1, r.host.n)
      assert.equal(2, #r.host[1])
      assert.same({ n = 2, {}, "http" }, r.serv)
      if six then assert.equal(0, r.ptr) else assert.is_true(r.ptr >= 1) end
    end)

    it("tohostname of a dotted quad is a reverse lookup (/etc/hosts here, no query)", function()
      local r, queries
      session(ZONE, function(srv)
        r = pack(dns.tohostname("127.0.0.1"))
        queries = srv.queries
      end)
      assert.equal("localhost", r[1])
      assert.same({ "127.0.0.1" }, r[2].ip)
      assert.equal(0, queries)
    end)

    it("/etc/hosts entries (localhost) resolve without a query", function()
      local r = {}
      session(ZONE, function(srv)
        r.toip = pack(dns.toip("localhost"))
        r.gai = dns.getaddrinfo("localhost")
        r.queries = srv.queries
      end)
      assert.equal("127.0.0.1", r.toip[1])
      assert.equal("localhost", r.toip[2].name)
      local found = false
      for _, e in ipairs(r.gai) do found = found or (e.family == "inet" and e.addr == "127.0.0.1") end
      assert.is_true(found)
      assert.equal(0, r.queries)
    end)

    it("a truncated answer (TC) is asked again over TCP", function()
      local r, protos
      session(ZONE, function(srv)
        r = pack(dns.toip("tc.test"))
        protos = {}
        for i, e in ipairs(srv.log) do protos[i] = e.proto end
      end)
      assert.equal("127.0.0.1", r[1])
      assert.same({ "udp", "tcp" }, protos)
    end)
  end)

  describe("gives LuaSocket's error strings:", function()
    -- Each name through the four functions: toip, tohostname, getaddrinfo, getnameinfo.
    -- (a 0.05 s try only for the names whose lookups end by the timeout: an
    -- answer that comes, under load, must not lose to it)
    local function all_four(name, times_out)
      local r = {}
      session(ZONE, function()
        r.toip = pack(dns.toip(name))
        r.tohostname = pack(dns.tohostname(name))
        r.getaddrinfo = pack(dns.getaddrinfo(name))
        r.getnameinfo = pack(dns.getnameinfo(name, "http"))
      end, { timeout = times_out and 0.05 or 10, tries = 1 })
      return r
    end

    local cases = {
      { "an unknown name (NXDOMAIN)", "nx.test", H_NOT_FOUND, G_NONAME },
      { "a server failure (SERVFAIL)", "servfail.test", H_TRY_AGAIN, G_AGAIN },
      { "a refusal (REFUSED)", "refused.test", H_TRY_AGAIN, G_AGAIN },
      { "no answer (dropped)", "drop.test", H_TRY_AGAIN, G_AGAIN, true },
      { "garbage: 5 bytes", "short.test", H_TRY_AGAIN, G_AGAIN, true },
      { "garbage: another query's id", "otherid.test", H_TRY_AGAIN, G_AGAIN, true },
      { "garbage: an answer record cut short", "badbody.test", H_NO_RECOVERY, G_FAIL },
      { "a name with no address (NODATA)", "empty.test", H_NO_DATA, G_NODATA },
    }
    for _, c in ipairs(cases) do
      local what, name, h, g, times_out = c[1], c[2], c[3], c[4], c[5]
      it(what, function()
        local r = all_four(name, times_out)
        assert.same({ n = 2, nil, h }, r.toip)
        assert.same({ n = 2, nil, h }, r.tohostname)
        assert.same({ n = 2, nil, g }, r.getaddrinfo)
        assert.same({ n = 2, nil, g }, r.getnameinfo)
      end)
    end

    it("toip of a name with IPv6 addresses only: no IPv4 address (NODATA)", function()
      local r = all_four("v6only.test")
      assert.same({ n = 2, nil, H_NO_DATA }, r.toip)
      assert.same({ "inet6 ::1" }, sorted_addrs(r.getaddrinfo[1]))
    end)

    it("an empty name, an IPv6 address for toip, an unknown service", function()
      local r = {}
      session(ZONE, function(srv)
        r.empty = pack(dns.getaddrinfo(""))
        r.emptyip = pack(dns.toip(""))
        r.v6 = pack(dns.toip("::1"))
        r.serv = pack(dns.getnameinfo("v4.test", "no-such-service"))
        r.queries = srv.queries
      end)
      assert.same({ n = 2, nil, G_NONAME }, r.empty)
      assert.same({ n = 2, nil, H_NOT_FOUND }, r.emptyip)
      assert.same({ n = 2, nil, H_NOT_FOUND }, r.v6)
      assert.same({ n = 2, nil, "service not supported for socket type" }, r.serv)
      assert.equal(0, r.queries)
    end)
  end)

  describe("rejects bad arguments as LuaSocket does", function()
    it("a host that is not a string", function()
      local errs = {}
      cosock.spawn(function()
        for _, f in ipairs { "toip", "tohostname", "getaddrinfo" } do
          errs[#errs + 1] = select(2, pcall(dns[f]))
          errs[#errs + 1] = select(2, pcall(dns[f], {}))
        end
        errs[#errs + 1] = select(2, pcall(dns.getnameinfo))
        errs[#errs + 1] = select(2, pcall(dns.getnameinfo, {}, nil))
        errs[#errs + 1] = select(2, pcall(dns.getnameinfo, "host.test", {}))
      end, "bad")
      net.run()
      assert.equal("bad argument #1 to 'toip' (string expected, got no value)", errs[1])
      assert.equal("bad argument #1 to 'toip' (string expected, got table)", errs[2])
      assert.equal("bad argument #1 to 'tohostname' (string expected, got no value)", errs[3])
      assert.equal("bad argument #1 to 'getaddrinfo' (string expected, got table)", errs[6])
      assert.equal("host and serv cannot be both nil", errs[7])
      assert.equal("bad argument #1 to 'getnameinfo' (string expected, got table)", errs[8])
      assert.equal("bad argument #2 to 'getnameinfo' (string expected, got table)", errs[9])
    end)

    it("a number is taken as a string", function()
      local r
      session(ZONE, function() r = pack(dns.toip(2130706433)) end)
      assert.equal("127.0.0.1", r[1])
    end)
  end)

  describe("setservers and configure", function()
    it("reject bad servers, timeouts and tries", function()
      local function err(f, ...)
        local ok, e = pcall(f, ...)
        assert.is_false(ok)
        return e
      end
      assert.matches("table or nil expected, got string", err(dns.setservers, "127.0.0.1"))
      assert.matches("at least one server expected", err(dns.setservers, {}))
      assert.matches("entry 1: numeric address expected, got 'dns.test'", err(dns.setservers, { "dns.test" }))
      assert.matches("entry 2: string expected, got number", err(dns.setservers, { "127.0.0.1", 53 }))
      assert.matches("port out of range", err(dns.setservers, { "127.0.0.1:0" }))
      assert.matches("port out of range", err(dns.setservers, { "[::1]:70000" }))
      assert.matches("numeric address expected", err(dns.setservers, { "127.1" }))
      assert.matches("table expected, got nil", err(dns.configure))
      assert.matches("timeout: seconds > 0", err(dns.configure, { timeout = 0 }))
      assert.matches("timeout: seconds > 0", err(dns.configure, { timeout = "1" }))
      assert.matches("tries: integer from 1 to 100", err(dns.configure, { tries = 0 }))
      assert.matches("tries: integer from 1 to 100", err(dns.configure, { tries = 1.5 }))
    end)

    it("take addresses with and without a port, IPv4 and IPv6", function()
      assert.is_true(dns.setservers { "127.0.0.1", "127.0.0.1:5353", "::1", "[::1]:5353" })
      assert.is_true(dns.configure { servers = { "127.0.0.1:9" }, timeout = 0.5, tries = 3 })
    end)

    it("tries: how many times a query is sent before giving up", function()
      local counts = {}
      cosock.spawn(function()
        local srv = dns_server.start(ZONE)
        for _, tries in ipairs { 1, 3 } do
          assert(dns.configure { servers = { srv.address }, timeout = 0.02, tries = tries })
          local before = srv:count("drop.test")
          local _, err = dns.toip("drop.test")
          assert.equal(H_TRY_AGAIN, err)
          counts[tries] = srv:count("drop.test") - before
        end
        srv:stop()
      end, "tries")
      net.run()
      assert.equal(1, counts[1])
      assert.equal(3, counts[3])
    end)

    it("a lookup in flight finishes with the servers it started with; new ones use the new", function()
      local r = {}
      cosock.spawn(function()
        local old = dns_server.start { ["name.test"] = { a = { "127.0.0.1" }, hold = true } }
        local new = dns_server.start { ["name.test"] = { a = { "127.0.0.1" } } }
        assert(dns.setservers { old.address })
        cosock.spawn(function()
          r.first = pack(dns.toip("name.test"))
          r.first_done = true
        end, "first")
        while old.queries == 0 do cosock.socket.sleep(0.001) end
        assert(dns.setservers { new.address })
        r.second = pack(dns.toip("name.test"))
        r.first_pending = not r.first_done
        old:release("name.test")
        while not r.first_done do cosock.socket.sleep(0.001) end
        r.old, r.new = old.queries, new.queries
        old:stop()
        new:stop()
      end, "main")
      net.run()
      assert.equal("127.0.0.1", r.second[1])
      assert.is_true(r.first_pending)
      assert.equal("127.0.0.1", r.first[1])
      assert.equal(1, r.old)
      assert.equal(1, r.new)
    end)

    -- A child Lua with env (a shell assignment list) that runs prog (PORT in it:
    -- a port free for TCP and UDP on 127.0.0.1, also given in env as PORT);
    -- returns what it printed.
    local function child(env, prog)
      local port
      for _ = 1, 20 do
        local t, u = luasocket.tcp(), luasocket.udp()
        assert(t:bind("127.0.0.1", 0))
        port = select(2, t:getsockname())
        local free = u:setsockname("127.0.0.1", port)
        t:close()
        u:close()
        if free then break end
      end
      local lua = require "spec.support.interpreter"
      local cmd = string.format("%s LUA_PATH=%q LUA_CPATH=%q %s -e %q 2>&1", env:gsub("PORT", port),
        package.path, package.cpath, lua, (prog:gsub("PORT", port)))
      local p = io.popen(cmd)
      local out = p:read("*a")
      p:close()
      return out
    end

    -- The child's program: a server for zone on PORT, then what body prints.
    local function served(zone, body)
      return [[
        local cosock = require "cosock"
        local dns_server = require "spec.support.dns_server"
        cosock.spawn(function()
          local srv = dns_server.start(]] .. zone .. [[, { port = PORT })
          ]] .. body .. [[
          srv:stop()
        end)
        cosock.run()
      ]]
    end

    it("COSOCK_DNS_SERVERS names the servers of a new program", function()
      local out = child("COSOCK_DNS_SERVERS=127.0.0.1:PORT", served([[{ ["env.test"] = { a = { "127.0.0.1" } } }]],
        [[io.write(tostring(cosock.socket.dns.toip("env.test")), " ", srv.queries)]]))
      assert.equal("127.0.0.1 1", out)
    end)

    it("a COSOCK_DNS_SERVERS that c-ares cannot read makes a lookup raise, naming it", function()
      local out = child("COSOCK_DNS_SERVERS='not an address'", [[
        local cosock = require "cosock"
        cosock.spawn(function() io.write(select(2, pcall(cosock.socket.dns.toip, "x.test"))) end)
        cosock.run()
      ]])
      assert.matches("cosock: cannot start the resolver (not an address): ", out, 1, true)
    end)

    it("the system's resolver configuration is honoured (the search domain, LOCALDOMAIN)", function()
      -- resolv.conf's "search" (LOCALDOMAIN overrides it, as for the system resolver).
      local out = child("COSOCK_DNS_SERVERS=127.0.0.1:PORT LOCALDOMAIN=zone.test",
        served([[{ ["short.zone.test"] = { a = { "127.0.0.1" } } }]],
          [[io.write(tostring(cosock.socket.dns.toip("short")), " ", srv.log[1].name)]]))
      assert.equal("127.0.0.1 short.zone.test", out)
    end)

  end)
end)
