-- cosock.sim: the virtual clock, the in-memory network, the seeded order and
-- the record (doc/simulation.md). Every assertion is about virtual time,
-- values and order; nothing here waits on real time or a real socket.

local cosock = require "cosock"
local core = require "cosock.core"
local sim = require "cosock.sim"
local luasocket = require "socket"
local L = require "spec.support.loop"

local socket = cosock.socket

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return tostring(err)
end

-- Runs fn as a task to its end under the simulation; returns what it returned.
local compat = require "cosock.compat"
local function run_task(fn)
  local out
  cosock.spawn(function() out = compat.pack(fn()) end, "main")
  cosock.run()
  return compat.unpack(out, 1, out.n)
end

-- A server task at addr:port that answers each line with "echo <line>".
local function echo_server(addr, port, conns)
  cosock.spawn(function()
    local srv = assert(socket.bind(addr, port))
    for _ = 1, conns or 1 do
      local c = assert(srv:accept())
      while true do
        local line = c:receive()
        if not line then break end
        c:send("echo " .. line .. "\n")
      end
      c:close()
    end
    srv:close()
  end, "server")
end

describe("cosock.sim", function()
  before_each(function()
    sim.off()
    cosock.reset()
  end)
  after_each(function() sim.off() end)

  describe("on and off", function()
    it("turns on before anything is spawned, and refuses after", function()
      cosock.spawn(function() end)
      assert.matches("already spawned", err_of(sim.on))
      assert.is_false(sim.active())
      cosock.run()
      sim.on()
      assert.is_true(sim.active())
    end)

    it("checks its options", function()
      assert.matches("unknown option 'sed'", err_of(sim.on, { sed = 1 }))
      assert.matches("seed must be an integer", err_of(sim.on, { seed = 1.5 }))
      assert.matches("numeric address", err_of(sim.on, { address = "host" }))
      assert.matches("unknown link option 'lag'", err_of(sim.on, { link = { lag = 1 } }))
      assert.matches("out of range", err_of(sim.on, { link = { loss = 2 } }))
      assert.is_false(sim.active())
    end)

    it("refuses its functions while off", function()
      assert.matches("simulation is off", err_of(sim.host, "a", "10.0.0.2"))
      assert.matches("simulation is off", err_of(sim.now))
    end)

    it("puts the real sockets and clock back when off, and after cosock.reset()", function()
      local real_gettime = luasocket.gettime
      sim.on()
      assert.is_nil(socket.tcp().inner_sock)
      assert.are_not.equal(real_gettime, luasocket.gettime)
      sim.off()
      assert.equal(real_gettime, luasocket.gettime)
      local s = socket.tcp()
      assert.is_not_nil(s.inner_sock)
      s:close()
      sim.on()
      cosock.reset()
      assert.is_false(sim.active())
      s = socket.tcp()
      assert.is_not_nil(s.inner_sock)
      s:close()
    end)

    it("drops the tasks a failed run left when turned off", function()
      sim.on()
      cosock.spawn(function() error("boom") end)
      cosock.spawn(function() socket.sleep(5) end)
      assert.matches("boom", err_of(cosock.run))
      sim.off()
      assert.equal(0, cosock.stats().tasks)
    end)
  end)

  describe("the virtual clock", function()
    it("moves only to the next deadline, and gettime and monotime follow it", function()
      sim.on({ clock = 500, epoch = 1000 })
      assert.equal(500, core.monotime())
      assert.equal(1000, socket.gettime())
      local seen = {}
      run_task(function()
        for _ = 1, 3 do
          socket.sleep(3600)
          seen[#seen + 1] = { core.monotime(), socket.gettime(), luasocket.gettime(), sim.now() }
        end
      end)
      assert.same({ 3600 + 500, 3600 + 1000, 3600 + 1000, 3600 }, seen[1])
      assert.same({ 3 * 3600 + 500, 3 * 3600 + 1000, 3 * 3600 + 1000, 3 * 3600 }, seen[3])
    end)

    it("jumps to a deadline years away at once (a timer object's, a task's wait's)", function()
      -- (on the OS's clock a deadline is queued a year at a time, the longest
      -- wait a poller takes; a pass per virtual year never ended a 1e300 s wait)
      sim.on()
      local seen = {}
      run_task(function()
        socket.sleep(1e300)
        seen[#seen + 1] = sim.now()
        cosock.timer.sleep_until(core.monotime() + 1e301)
        seen[#seen + 1] = sim.now()
        cosock.op.sleep(1e302):perform()
        seen[#seen + 1] = sim.now()
        local fired = 0
        local h = cosock.timer.every(1e299, function() fired = fired + 1 end)
        socket.sleep(3.5e299)
        h:cancel()
        seen[#seen + 1] = fired
      end)
      assert.equal(1e300, seen[1])
      assert.is_true(seen[2] >= 1e301 and seen[3] >= 1e302)
      assert.equal(3, seen[4])
    end)

    it("moves os.time() and os.date(fmt) with it; with a time of their own they are the real ones", function()
      local real_time, real_date = os.time, os.date
      sim.on({ epoch = 86400 * 365 })
      assert.equal(86400 * 365, os.time())
      run_task(function() socket.sleep(90.5) end)
      assert.equal(86400 * 365 + 90, os.time())
      assert.equal(real_date("!%H:%M:%S", 86400 * 365 + 90), os.date("!%H:%M:%S"))
      assert.equal(real_time({ year = 2020, month = 1, day = 1 }), os.time({ year = 2020, month = 1, day = 1 }))
      assert.equal("1971-01-01", os.date("!%Y-%m-%d", 86400 * 365))
      sim.off()
      assert.equal(real_time, os.time)
      assert.equal(real_date, os.date)
    end)

    it("times channel receives, select, timers and socket calls", function()
      sim.on()
      local got = {}
      run_task(function()
        local _, rx = cosock.channel.new()
        rx:settimeout(7)
        local t0 = sim.now()
        got.chan = { rx:receive() }
        got.chan_t = sim.now() - t0
        got.select = { socket.select({ rx }, nil, 2) }
        local t = cosock.timer.create_oneshot(30)
        t0 = sim.now()
        assert(t:wait())
        got.timer_t = sim.now() - t0
      end)
      assert.same({ nil, "timeout" }, got.chan)
      assert.equal(7, got.chan_t)
      assert.same({ nil, nil, "timeout" }, got.select)
      assert.equal(30, got.timer_t)
    end)

    it("refuses a wait for ever that nothing can end (cosock's stall)", function()
      sim.on()
      cosock.spawn(function()
        local _, rx = cosock.channel.new()
        rx:receive()
      end)
      local _, ok, err = L.capture(cosock.run) -- (the dump it prints)
      assert.is_false(ok)
      assert.matches("no sockets and no timeout", err)
    end)

    it("refuses a real descriptor yielded while it is on", function()
      local real = assert(socket.bind("127.0.0.1", 0))
      sim.on()
      cosock.spawn(function() real:accept() end)
      assert.matches("cosock.sim: a task waits on a real socket", err_of(cosock.run))
      cosock.reset()
      real:close()
    end)
  end)

  describe("tcp", function()
    it("connects to a listener by name and port and carries lines with latency", function()
      sim.on()
      sim.host("hub.lan", "10.0.0.2")
      sim.link("10.0.0.1", "10.0.0.2", { latency = 0.25 })
      echo_server("10.0.0.2", 80)
      local r = { run_task(function()
        local c = assert(socket.connect("hub.lan", 80))
        local t_conn = sim.now()
        local ip, port, fam = c:getpeername()
        local lip = c:getsockname()
        assert.equal(1, c:setoption("tcp-nodelay", true))
        assert.equal(4, (c:send("hi\r\n")))
        local line = c:receive()
        local t_line = sim.now()
        c:close()
        return t_conn, ip, port, fam, lip, line, t_line, c.class
      end) }
      assert.same({ 0.5, "10.0.0.2", 80, "inet", "10.0.0.1", "echo hi", 1.0, "tcp{client}" }, r)
    end)

    it("refuses a connect to a port nobody listens on, and already connected", function()
      sim.on()
      echo_server("10.0.0.2", 80)
      local a, b, c2 = run_task(function()
        local s = socket.tcp()
        local r1 = { s:connect("10.0.0.2", 81) }
        local c = assert(socket.connect("10.0.0.2", 80))
        local r2 = { c:connect("10.0.0.2", 80) }
        c:close()
        return r1, r2, s.class
      end)
      assert.same({ nil, "connection refused" }, a)
      assert.same({ nil, "already connected" }, b)
      assert.equal("tcp{master}", c2)
    end)

    it("raises for a name the test did not declare; a name declared false is not found", function()
      sim.on()
      sim.host("gone.lan", false)
      local r
      cosock.spawn(function() r = { socket.connect("gone.lan", 80) } end)
      cosock.run()
      assert.same({ nil, "host not found" }, r)
      cosock.spawn(function() socket.connect("nowhere.lan", 80) end)
      assert.matches("no simulated host named 'nowhere.lan'", err_of(cosock.run))
    end)

    it("answers dns lookups from the simulated names", function()
      sim.on()
      sim.host("hub.lan", "10.0.0.2")
      local ip, info = socket.dns.toip("hub.lan")
      assert.equal("10.0.0.2", ip)
      assert.same({ "10.0.0.2" }, info.ip)
      assert.matches("no simulated host", err_of(socket.dns.toip, "other.lan"))
      assert.equal("hub.lan", (socket.dns.tohostname("10.0.0.2")))
      assert.equal("10.0.0.7", (socket.dns.tohostname("10.0.0.7")))
      assert.same({ { family = "inet", addr = "10.0.0.2" } }, socket.dns.getaddrinfo("hub.lan"))
      assert.same({ "hub.lan" }, socket.dns.getnameinfo("10.0.0.2"))
      assert.same({ "localhost" }, socket.dns.getnameinfo("127.0.0.1"))
    end)

    it("receives every pattern, with prefix, and partial data on timeout and close", function()
      sim.on()
      cosock.spawn(function()
        local srv = assert(socket.bind("*", 90))
        local c = assert(srv:accept())
        c:send("li\rne1\nabcdefXYZ")
        socket.sleep(5)
        c:send("tail")
        c:close()
        srv:close()
      end)
      local r = { run_task(function()
        local c = assert(socket.connect("127.0.0.1", 90))
        local out = { c:receive("*l") }
        out[#out + 1] = c:receive(4, "p:")
        out[#out + 1] = c:receive(2)
        c:settimeout(1)
        out[#out + 1] = { c:receive("*l") }
        c:settimeout(nil)
        out[#out + 1] = { c:receive("*l") }
        out[#out + 1] = { c:receive("*a") }
        return out
      end) }
      assert.same({ "line1", "p:ab", "cd", { nil, "timeout", "efXYZ" }, { nil, "closed", "tail" }, { "" } }, r[1])
    end)

    it("splits data into segments (partial reads) and sends past a full sndbuf (partial writes)", function()
      sim.on({ link = { segment = 3, sndbuf = 4, bandwidth = 100 } })
      local big = string.rep("0123456789", 10)
      cosock.spawn(function()
        local srv = assert(socket.bind("*", 91))
        local c = assert(srv:accept())
        assert.equal(#big, (c:send(big)))
        c:close()
        srv:close()
      end)
      local got, t = run_task(function()
        local c = assert(socket.connect("127.0.0.1", 91))
        local data = c:receive("*a")
        return data, sim.now()
      end)
      assert.equal(big, got)
      assert.is_true(t >= 0.999) -- 100 bytes at 100 bytes/s (give or take rounding)
      local wakes = 0
      for _, e in ipairs(sim.record()) do
        if e.event == "wake" and e.task == "main" then wakes = wakes + 1 end
      end
      assert.is_true(wakes > 10) -- the data came in pieces
    end)

    it("returns a partial write's last index when the send buffer stays full past the timeout", function()
      sim.on({ link = { latency = 10, sndbuf = 4 } })
      echo_server("10.0.0.2", 80)
      local r = { run_task(function()
        local c = assert(socket.connect("10.0.0.2", 80))
        c:settimeout(1)
        local a = { c:send("0123456789") }
        c:settimeout(nil)
        local b = { c:send("0123456789\n", a[3] + 1) }
        local line = c:receive()
        c:close()
        return a, b, line
      end) }
      assert.same({ nil, "timeout", 4 }, r[1])
      assert.same({ 11 }, r[2])
      assert.equal("echo 0123456789", r[3])
    end)

    it("resets connections (sim.cut) and black-holes addresses", function()
      sim.on()
      echo_server("10.0.0.2", 80)
      local r = { run_task(function()
        local c = assert(socket.connect("10.0.0.2", 80))
        assert.equal(1, sim.cut("10.0.0.2", 80))
        local a = { c:receive() }
        local b = { c:send("x") }
        sim.blackhole("10.0.0.3")
        local d = socket.tcp()
        d:settimeout(20)
        local t0 = sim.now()
        local e = { d:connect("10.0.0.3", 80) }
        return a, b, e, sim.now() - t0
      end) }
      assert.same({ nil, "connection reset by peer", "" }, r[1])
      assert.same({ nil, "closed", 0 }, r[2])
      assert.same({ nil, "timeout" }, r[3])
      assert.equal(20, r[4])
    end)

    it("waits in select over simulated sockets", function()
      sim.on()
      echo_server("10.0.0.2", 80)
      local r = run_task(function()
        local c = assert(socket.connect("10.0.0.2", 80))
        c:send("a\n")
        local rr = socket.select({ c }, nil, 10)
        local line = rr[1]:receive()
        c:close()
        return rr[1] == c and line
      end)
      assert.equal("echo a", r)
    end)

    it("refuses a second task waiting on one socket with cosock's words", function()
      sim.on()
      local srv = assert(socket.bind("*", 92))
      cosock.spawn(function() srv:accept() end)
      cosock.spawn(function() srv:accept() end)
      assert.matches("recvr waker already set", err_of(cosock.run))
    end)
  end)

  describe("more of tcp", function()
    it("runs cosock.socket.http over the simulated network", function()
      sim.on()
      sim.host("hub.lan", "10.0.0.2")
      cosock.spawn(function()
        local srv = assert(socket.bind("hub.lan", 80))
        local c = assert(srv:accept())
        repeat local l = c:receive() until l == ""
        c:send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        c:close()
        srv:close()
      end, "server")
      local body, code = run_task(function() return socket.http.request("http://hub.lan/status") end)
      assert.equal("hello", body)
      assert.equal(200, code)
    end)

    it("leaves a task blocked on a socket another task closed waiting, as cosock (set_close_wakes wakes it)", function()
      for _, wakes in ipairs({ false, true }) do
        cosock.reset()
        sim.on()
        local was = cosock.set_close_wakes(wakes)
        echo_server("10.0.0.2", 80)
        local c, r, t
        cosock.spawn(function()
          c = assert(socket.connect("10.0.0.2", 80))
          c:settimeout(50)
          r = { c:receive() }
          t = sim.now()
          sim.cut("10.0.0.2")
        end, "reader")
        cosock.spawn(function()
          socket.sleep(1)
          c:close()
        end, "closer")
        cosock.run()
        cosock.set_close_wakes(was)
        assert.same({ nil, wakes and "closed" or "timeout", "" }, r)
        assert.equal(wakes and 1 or 50, t)
        sim.off()
      end
    end)

    it("sends the close with shutdown and ends the black hole when told", function()
      sim.on()
      cosock.spawn(function()
        local srv = assert(socket.bind("*", 93))
        local c = assert(srv:accept())
        local data = c:receive("*a")
        c:send(data)
        c:close()
        srv:close()
      end)
      local r = { run_task(function()
        sim.blackhole("10.0.0.9")
        sim.blackhole("10.0.0.9", false)
        local c = assert(socket.connect("127.0.0.1", 93))
        c:send("all of it")
        assert.equal(1, c:shutdown("send"))
        return c:receive("*a")
      end) }
      assert.same({ "all of it" }, r)
    end)

    it("takes a link of the pair first, then one with \"*\", then the defaults", function()
      sim.on({ link = { latency = 1 } })
      sim.link("*", "10.0.0.2", { latency = 2 })
      sim.link("10.0.0.3", "10.0.0.1", { latency = 3 })
      echo_server("10.0.0.2", 80)
      echo_server("10.0.0.3", 80)
      echo_server("10.0.0.4", 80)
      local t = { run_task(function()
        local out = {}
        for i, addr in ipairs({ "10.0.0.2", "10.0.0.3", "10.0.0.4" }) do
          local t0 = sim.now()
          local c = assert(socket.connect(addr, 80))
          out[i] = sim.now() - t0 -- a connect is a round trip
          c:close()
        end
        return out
      end) }
      assert.same({ 4, 6, 2 }, t[1])
    end)

    it("has LuaSocket's small methods: getfd, dirty, getstats, getoption, getfamily", function()
      sim.on()
      echo_server("10.0.0.2", 80)
      local r = { run_task(function()
        local c = assert(socket.connect("10.0.0.2", 80))
        c:send("x\n")
        socket.sleep(1)
        local dirty = c:dirty()
        local line = c:receive()
        local got, sent = c:getstats()
        c:setoption("keepalive", true)
        local out = { c:getfd(), dirty, c:dirty(), line, got, sent, c:getoption("keepalive"),
          c:getoption("linger"), c.class, c:getfamily() }
        c:close()
        return out
      end) }
      assert.same({ -1, true, false, "echo x", 7, 2, true, false, "tcp{client}", "inet" }, r[1])
    end)

    it("resets the connections a closed listener had not accepted, and drops a connect beyond its backlog", function()
      sim.on()
      local srv = assert(socket.bind("10.0.0.2", 80, 1))
      local r = { run_task(function()
        local a = assert(socket.connect("10.0.0.2", 80))
        local b = socket.tcp()
        b:settimeout(5)
        local rb = { b:connect("10.0.0.2", 80) } -- the backlog (1) is full
        srv:close()
        return { a:receive() }, rb
      end) }
      assert.same({ nil, "connection reset by peer", "" }, r[1])
      assert.same({ nil, "timeout" }, r[2])
    end)

    it("sees data that arrived before select as ready at once", function()
      sim.on()
      echo_server("10.0.0.2", 80)
      local r, dt = run_task(function()
        local c = assert(socket.connect("10.0.0.2", 80))
        c:send("now\n")
        socket.sleep(1)
        local t0 = sim.now()
        local ready = socket.select({ c }, nil, 10)
        local dt = sim.now() - t0
        local line = ready[1]:receive()
        c:close()
        return line, dt
      end)
      assert.equal("echo now", r)
      assert.equal(0, dt)
    end)

    it("refuses a bind to an address and port in use", function()
      sim.on()
      local a = socket.tcp()
      assert.equal(1, a:bind("*", 94))
      assert.same({ nil, "address already in use" }, { socket.tcp():bind("0.0.0.0", 94) })
      a:close()
      assert.equal(1, socket.tcp():bind("*", 94))
    end)

    it("checks the arguments of host and link", function()
      sim.on()
      assert.matches("bad argument #1 to 'cosock.sim.host'", err_of(sim.host, 1, "10.0.0.2"), 1, true)
      assert.matches("bad argument #2 to 'cosock.sim.host'", err_of(sim.host, "a", "name"), 1, true)
      assert.matches("bad argument #2 to 'cosock.sim.link' (address expected, got nil)", err_of(sim.link, "a"), 1, true)
      assert.matches("must be a number", err_of(sim.link, "a", "b", { latency = "1" }))
      assert.matches("link options table expected", err_of(sim.link, "a", "b", 5))
    end)

    it("draws jitter from the seed, keeping a stream in order", function()
      local function arrivals(seed)
        sim.on({ seed = seed, link = { latency = 0.1, jitter = 0.5 } })
        local times = {}
        cosock.spawn(function()
          local srv = assert(socket.bind("*", 95))
          local c = assert(srv:accept())
          for i = 1, 5 do c:send(i .. "\n") end
          c:close()
          srv:close()
        end)
        local lines = {}
        run_task(function()
          local c = assert(socket.connect("127.0.0.1", 95))
          for _ = 1, 5 do
            lines[#lines + 1] = c:receive()
            times[#times + 1] = sim.now()
          end
        end)
        sim.off()
        assert.same({ "1", "2", "3", "4", "5" }, lines)
        return times
      end
      local a = arrivals(11)
      assert.same(a, arrivals(11))
      assert.are_not.same(a, arrivals(12))
    end)
  end)

  describe("udp", function()
    it("carries datagrams by address and port, connected or not", function()
      sim.on()
      local r = { run_task(function()
        local a, b = socket.udp(), socket.udp()
        assert.equal(1, b:setsockname("*", 1900))
        a:sendto("hello", "10.0.0.1", 1900)
        local dg, ip, port = b:receivefrom()
        b:setpeername(ip, port)
        b:send("back")
        local back = a:receive()
        return dg, ip, b.class, back
      end) }
      assert.same({ "hello", "10.0.0.1", "udp{connected}", "back" }, r)
    end)

    it("loses datagrams as the link's loss draws, the same way for the same seed", function()
      local function lost(seed)
        sim.on({ seed = seed, link = { loss = 0.5 } })
        local n = 0
        run_task(function()
          local a, b = socket.udp(), socket.udp()
          b:setsockname("*", 5000)
          b:settimeout(1)
          for i = 1, 40 do a:sendto(tostring(i), "10.0.0.1", 5000) end
          while b:receive() do n = n + 1 end
        end)
        sim.off()
        return n
      end
      local n1 = lost(7)
      assert.is_true(n1 > 0 and n1 < 40)
      assert.equal(n1, lost(7))
    end)
  end)

  describe("more of udp", function()
    it("sends a broadcast to every socket bound to its port", function()
      sim.on()
      local got = { run_task(function()
        local a, b, s = socket.udp(), socket.udp(), socket.udp()
        a:setsockname("10.0.0.5", 1900)
        b:setsockname("10.0.0.6", 1900)
        s:sendto("M-SEARCH", "239.255.255.250", 1900)
        return a:receive(), b:receive()
      end) }
      assert.same({ "M-SEARCH", "M-SEARCH" }, got)
    end)

    it("times out a receive with nothing sent, and gives nil, 'closed' after close", function()
      sim.on()
      local r = { run_task(function()
        local u = socket.udp()
        u:settimeout(3)
        local a = { u:receive() }
        u:close()
        return a, { u:receive() }, sim.now()
      end) }
      assert.same({ { nil, "timeout" }, { nil, "closed" }, 3 }, r)
    end)
  end)

  describe("the seeded order", function()
    local function racy()
      local ready = false
      cosock.spawn(function() socket.sleep(1); ready = true end, "init")
      cosock.spawn(function() socket.sleep(1); assert(ready, "used before init") end, "user")
      cosock.run()
    end

    it("keeps first-come order without a seed", function()
      sim.on()
      racy()
    end)

    it("finds an order-dependent bug over seeds, and the seed replays it exactly", function()
      local seed, err, text = sim.explore(100, racy)
      assert.is_number(seed)
      assert.matches("used before init", err)
      local again, err2, text2 = sim.explore({ seed }, racy)
      assert.equal(seed, again)
      assert.equal(text, text2)
      assert.matches("used before init", err2)
      assert.is_false(sim.active())
    end)
  end)

  describe("the record", function()
    it("notes connects, sends, wakes and timeouts, the same on every run", function()
      local function once()
        sim.on({ seed = 3 })
        echo_server("10.0.0.2", 80, 2)
        cosock.spawn(function()
          for _ = 1, 2 do
            local c = assert(socket.connect("10.0.0.2", 80))
            c:send("x\n")
            c:receive()
            c:close()
            socket.sleep(30)
          end
        end, "client")
        cosock.run()
        local text = sim.transcript()
        local events = {}
        for _, e in ipairs(sim.record()) do events[e.event] = true end
        sim.off()
        return text, events
      end
      local t1, ev = once()
      assert.equal(t1, (once()))
      for _, k in ipairs({ "connect", "connected", "accept", "send", "wake", "timeout", "start", "fin", "close" }) do
        assert.is_true(ev[k], k)
      end
    end)

    it("keeps none with record = false", function()
      sim.on({ record = false })
      run_task(function() socket.sleep(1) end)
      assert.same({}, sim.record())
    end)

    it("starts afresh when on() is called again, dropping the tasks of the last one", function()
      sim.on({ seed = 1 })
      cosock.spawn(function() socket.sleep(5) end)
      sim.log("first")
      sim.on({ seed = 2 })
      assert.equal(0, cosock.stats().tasks)
      assert.same({}, sim.record())
      assert.equal(0, sim.now())
    end)

    it("keeps the test's own lines and filters the transcript", function()
      sim.on()
      sim.log("hello")
      assert.equal("note", sim.record()[1].event)
      assert.matches("note +hello", sim.transcript({ note = true }))
      assert.equal("", sim.transcript({ connect = true }))
    end)
  end)
end)

describe("cosock.sim with TLS #luasec", function()
  before_each(function() cosock.reset() end)
  after_each(function() sim.off() end)

  it("wraps a simulated socket in a pass-through whose handshake completes", function()
    local ssl = require "cosock.ssl"
    sim.on()
    echo_server("10.0.0.2", 443)
    local r = { run_task(function()
      local c = assert(socket.connect("10.0.0.2", 443))
      local t = assert(ssl.wrap(c, { mode = "client", protocol = "any" }))
      assert.is_true(t:dohandshake())
      t:send("sec\n")
      local line = t:receive()
      t:settimeout(1)
      local r2 = { t:receive() }
      t:close()
      return t.class, line, r2
    end) }
    assert.same({ "tls{}", "echo sec", { nil, "wantread", "" } }, r)
  end)
end)
