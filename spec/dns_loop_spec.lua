-- Lookups wait in the loop: other tasks run while an answer is pending, many
-- lookups run at once, the caller's timeout holds, and a lookup whose task is
-- cancelled or reset leaves nothing behind. Orders and counts only, no times.

local cosock = require "cosock"
local core = require "cosock.core"
local net = require "spec.support.net"
local dns_server = require "spec.support.dns_server"
local compat = require "cosock.compat"

local dns = cosock.socket.dns
local socket = cosock.socket
local pack = net.pack

if core.dns ~= "c-ares" then
  describe("lookups in the loop without c-ares", function()
    it("are LuaSocket's blocking calls (spec/dns_spec.lua checks the fallback)", function()
      assert.equal(require("socket").dns.toip, dns.toip)
    end)
  end)
  return
end

-- A server session whose lookups wait for as long as a spec holds their
-- answers: one try of a minute, not the session's default 0.2 s and a retry
-- (on a loaded machine a held lookup timed out, or was asked again, before
-- the spec released it). A spec that fails still ends: wait_for gives up.
local function session(zone, fn)
  return dns_server.session(zone, fn, { timeout = 60, tries = 1 })
end

-- Fails the spec (raises) unless pred() becomes true within 5 s of passes.
local function wait_for(pred, what)
  for _ = 1, 5000 do
    if pred() then return end
    socket.sleep(0.001)
  end
  error("gave up waiting for " .. what, 2)
end

describe("lookups in the loop", function()
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
  end)

  it("a slow answer does not delay a ping-pong between two other tasks", function()
    local log, rounds = {}, 0
    local ROUNDS = 200
    session({ ["slow.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
      local done = false
      cosock.spawn(function()
        log[#log + 1] = "lookup asked"
        local ip = dns.toip("slow.test")
        log[#log + 1] = "lookup answered " .. tostring(ip)
        done = true
      end, "lookup")
      wait_for(function() return srv.queries > 0 end, "the query")
      local a, b = net.pair()
      cosock.spawn(function()
        for _ = 1, ROUNDS do
          local line = b:receive()
          if not line then break end
          b:send(line .. "\n")
        end
        b:close()
      end, "pong")
      for i = 1, ROUNDS do
        assert(a:send(i .. "\n"))
        assert.equal(tostring(i), a:receive())
        rounds = rounds + 1
      end
      log[#log + 1] = "ping-pong done, lookup still pending: " .. tostring(not done)
      a:close()
      srv:release("slow.test")
      wait_for(function() return done end, "the answer")
    end)
    assert.equal(ROUNDS, rounds)
    assert.same({
      "lookup asked",
      "ping-pong done, lookup still pending: true",
      "lookup answered 127.0.0.1",
    }, log)
  end)

  it("answers come in the order the server gives them, not the order asked", function()
    local order = {}
    session({
      ["late.test"] = { a = { "127.0.0.1" }, hold = true },
      ["early.test"] = { a = { "127.0.0.1" } },
    }, function(srv)
      local n = 0
      for _, name in ipairs { "late.test", "early.test" } do
        cosock.spawn(function()
          local ip = dns.toip(name)
          order[#order + 1] = name .. " " .. tostring(ip)
          n = n + 1
        end, name)
      end
      wait_for(function() return #order == 1 end, "the early answer")
      srv:release("late.test")
      wait_for(function() return n == 2 end, "both answers")
    end)
    assert.same({ "early.test 127.0.0.1", "late.test 127.0.0.1" }, order)
  end)

  it("many lookups run at once", function()
    local N = 100
    local zone, results, peak = {}, {}, 0
    for i = 1, N do zone["n" .. i .. ".test"] = { a = { "127.0.0.1" }, hold = true } end
    session(zone, function(srv)
      local done = 0
      for i = 1, N do
        cosock.spawn(function()
          results[i] = pack(dns.getaddrinfo("n" .. i .. ".test"))
          done = done + 1
        end, "lookup " .. i)
      end
      -- Every query reaches the server before any is answered.
      wait_for(function() return srv.queries >= 2 * N end, "all the queries") -- A and AAAA each
      peak = core.dns_stats().lookups
      for i = 1, N do srv:release("n" .. i .. ".test") end
      wait_for(function() return done == N end, "all the answers")
    end)
    assert.equal(N, peak)
    for i = 1, N do
      assert.same({ n = 1, { { family = "inet", addr = "127.0.0.1" } } }, results[i], "lookup " .. i)
    end
  end)

  describe("honours the caller's timeout", function()
    local ZONE = { ["held.test"] = { a = { "127.0.0.1" }, hold = true }, ["v4.test"] = { a = { "127.0.0.1" } } }

    for _, mode in ipairs { "b", "t" } do
      it("a socket's " .. mode .. " timeout ends a pending lookup with 'timeout'", function()
        local r = {}
        session(ZONE, function(srv)
          local port = net.dead_port()
          local c = socket.tcp()
          c:settimeout(0.05, mode)
          r.connect = pack(c:connect("held.test", port))
          r.answered = srv.answered
          c:close()
          srv:release("held.test")                -- the late answer is dropped
        end)
        assert.same({ n = 2, nil, "timeout" }, r.connect)
        assert.equal(0, r.answered)
      end)
    end

    it("a timeout of 0 cannot wait: 'timeout' unless the answer is at hand (/etc/hosts)", function()
      local r = {}
      session(ZONE, function(srv)
        local c = socket.tcp()
        c:settimeout(0)
        r.held = pack(c:connect("v4.test", 1))
        r.answered = srv.answered
        c:close()
        local l, port = net.listen()
        c = socket.tcp()
        c:settimeout(0)
        r.hosts = pack(c:connect("localhost", port))   -- connect itself may be in progress
        c:close()
        l:close()
      end)
      assert.same({ n = 2, nil, "timeout" }, r.held)
      assert.equal(0, r.answered)                        -- it did not wait for the answer
      assert.is_true(r.hosts[1] == 1 or r.hosts[2] == "timeout")
      assert.is_not.equal("host or service not provided, or not known", r.hosts[2])
    end)

    it("the 't' timeout covers the lookup and the connect together", function()
      local r = {}
      session({ ["slow.test"] = { a = { "127.0.0.1" }, delay = 0.02 } }, function()
        local l, port = net.listen()
        local c = socket.tcp()
        c:settimeout(5, "t")
        r.ok = pack(c:connect("slow.test", port))
        c:close()
        l:close()
      end)
      assert.same({ n = 1, 1 }, r.ok)
    end)
  end)

  it("a task cancelled while its lookup is pending gets nothing; the answer is dropped", function()
    local r = { resumed = false }
    session({ ["held.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
      local h = cosock.spawn(function()
        dns.toip("held.test")
        r.resumed = true
      end, "victim")
      wait_for(function() return srv.queries > 0 end, "the query")
      r.pending = core.dns_stats().lookups
      h:cancel()
      r.alive = h:is_alive()
      srv:release("held.test")
      wait_for(function() return srv.answered > 0 end, "the answer")
      wait_for(function() return core.dns_stats().lookups == 0 end, "the query to end")
      socket.sleep(0.01)
    end)
    assert.equal(1, r.pending)
    assert.is_false(r.alive)
    assert.is_false(r.resumed)
  end)

  it("a task cancelled after its answer came, before it ran, gets nothing", function()
    local r = { resumed = false }
    session({ ["held.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
      local victim
      -- Both answers are sent at once on release, the canceller's first: both
      -- tasks are made ready in that order, so the canceller runs first and
      -- finds the victim alive with its answer taken (no query in flight).
      cosock.spawn(function()
        dns.toip("held.test")
        r.lookups = core.dns_stats().lookups
        r.alive = victim:is_alive()
        victim:cancel()
        r.cancelled = true
      end, "canceller")
      wait_for(function() return srv.queries == 1 end, "the canceller's query")
      victim = cosock.spawn(function()
        dns.toip("held.test")
        r.resumed = true
      end, "victim")
      wait_for(function() return srv.queries == 2 end, "the victim's query")
      srv:release("held.test")
      wait_for(function() return r.cancelled end, "the cancel")
    end)
    assert.equal(0, r.lookups)
    assert.is_true(r.alive)
    assert.is_false(r.resumed)
  end)

  it("reset with lookups in flight ends them cleanly; lookups work again after", function()
    local zone = { ["held.test"] = { a = { "127.0.0.1" }, hold = true } }
    local srv
    cosock.spawn(function()
      srv = dns_server.start(zone)
      assert(dns.configure { servers = { srv.address }, timeout = 5, tries = 1 })
      for i = 1, 3 do cosock.spawn(function() dns.toip("held.test") end, "lookup " .. i) end
      wait_for(function() return srv.queries >= 3 end, "the queries")
      error("stop the loop")
    end, "stopper")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.matches("stop the loop", err)
    assert.equal(3, core.dns_stats().lookups)
    cosock.reset()
    local s = core.dns_stats()
    assert.same({ 0, 0, 0 }, { s.lookups, s.channels, s.fds })
    assert.equal(0, core.stats().timers)
    srv.udp:close()
    srv.tcp:close()
    local r
    session({ ["v4.test"] = { a = { "127.0.0.1" } } }, function()
      r = pack(dns.toip("v4.test"))
    end)
    assert.equal("127.0.0.1", r[1])
  end)

  describe("in a coroutine the task resumes itself (the waker protocol)", function()
    -- Runs fn in a coroutine, forwarding its yields to the loop and the loop's
    -- answers back, as a task that drives its own coroutines does.
    local function forwarding(fn)
      local co = coroutine.create(fn)
      local res = pack(coroutine.resume(co))
      while coroutine.status(co) ~= "dead" do
        res = pack(coroutine.resume(co, coroutine.yield(compat.unpack(res, 2, res.n))))
      end
      assert(res[1], res[2])
      return compat.unpack(res, 2, res.n)
    end

    it("a lookup yields {lookup}, the loop wakes it through setwaker", function()
      local r = {}
      session({ ["held.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
        cosock.spawn(function()
          r.res = pack(forwarding(function() return dns.toip("held.test") end))
        end, "forwarder")
        wait_for(function() return srv.queries > 0 end, "the query")
        srv:release("held.test")
        wait_for(function() return r.res end, "the answer")
      end)
      assert.equal("127.0.0.1", r.res[1])
      assert.equal("held.test", r.res[2].name)
    end)

    it("with a timeout, and cancelled", function()
      local r = { resumed = false }
      session({ ["held.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
        cosock.spawn(function()
          r.timed = pack(forwarding(function()
            local c = socket.tcp()
            c:settimeout(0.02)
            local a, b = c:connect("held.test", 1)
            c:close()
            return a, b
          end))
        end, "timed")
        local h = cosock.spawn(function()
          forwarding(function() return dns.toip("held.test") end)
          r.resumed = true
        end, "cancelled")
        wait_for(function() return r.timed and srv.queries >= 2 end, "the timeout")
        h:cancel()
        srv:release("held.test")
      end)
      assert.same({ n = 2, nil, "timeout" }, r.timed)
      assert.is_false(r.resumed)
    end)

    it("its lookup object refuses a second waker and unknown kinds", function()
      local r = {}
      session({ ["held.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv)
        local co = coroutine.create(function() return dns.toip("held.test") end)
        local _, recvt = coroutine.resume(co)
        local obj = recvt[1]
        r.name = tostring(getmetatable(obj).__name)
        r.kind = select(2, pcall(obj.setwaker, obj, "sendr", function() end))
        obj:setwaker("recvr", function() r.woken = true end)
        r.second = select(2, pcall(obj.setwaker, obj, "recvr", function() end))
        r.notbox = select(2, pcall(obj.setwaker, {}, "recvr", function() end))
        srv:release("held.test")
        wait_for(function() return r.woken end, "the waker")
        r.res = pack(coroutine.resume(co))
      end)
      assert.equal("cosock.dns lookup", r.name)
      assert.matches("unsupported wake kind: sendr", r.kind)
      assert.matches("recvr waker already set", r.second)
      assert.matches("cosock lookup expected, got table", r.notbox)
      assert.same(true, r.res[1])
      assert.equal("127.0.0.1", r.res[2])
    end)
  end)

  it("outside a coroutine a lookup blocks, with LuaSocket's resolver (no task to park)", function()
    assert.is_false(compat.isyieldable())
    local started = core.dns_stats().started
    local ip, resolved = dns.toip("localhost")
    assert.equal("127.0.0.1", ip)
    assert.equal("localhost", resolved.name)
    assert.equal(started, core.dns_stats().started)
  end)
end)
