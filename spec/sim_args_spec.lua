-- cosock.sim's argument checks (issue 35): explore counts its seeds without
-- listing them and checks them; cut needs an address; on refuses
-- non-finite clocks and a record that is not a boolean; the simulated
-- sockets' methods called with a dot say "bad self".

local cosock = require "cosock"
local sim = require "cosock.sim"

local socket = cosock.socket

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return tostring(err)
end

local function has(text, part)
  assert(text:find(part, 1, true), "expected '" .. part .. "' in: " .. text)
end

describe("cosock.sim arguments", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  describe("explore", function()
    it("refuses a count that is NaN, negative or not an integer, naming explore and the argument", function()
      local fn = function() end
      has(err_of(sim.explore, 0 / 0, fn), "bad argument #1 to 'cosock.sim.explore' (count (an integer >= 0 or math.huge) or list of seeds expected, got NaN)")
      has(err_of(sim.explore, -1, fn), "bad argument #1 to 'cosock.sim.explore' (count (an integer >= 0 or math.huge) or list of seeds expected, got -1)")
      has(err_of(sim.explore, 1.5, fn), "got 1.5)")
      has(err_of(sim.explore, -math.huge, fn), "bad argument #1 to 'cosock.sim.explore'")
      has(err_of(sim.explore, "3", fn), "bad argument #1 to 'cosock.sim.explore' (count or list of seeds expected, got \"3\")")
      has(err_of(sim.explore, { 1, 2.5 }, fn), "bad argument #1 to 'cosock.sim.explore' (integer seed at [2] expected, got 2.5)")
      has(err_of(sim.explore, 3, nil), "bad argument #2 to 'cosock.sim.explore' (function expected, got nil)")
      has(err_of(sim.explore, 3, fn, 5), "bad argument #3 to 'cosock.sim.explore' (table of sim.on options or nil expected, got 5)")
      has(err_of(sim.explore, 3, fn, { clok = 0 }), "bad argument #3 to 'cosock.sim.explore' (unknown option 'clok')")
      has(err_of(sim.explore, 3, fn, { seed = 1 }), "no option 'seed'")
      assert.is_false(sim.active())
    end)

    it("counts its seeds: a huge count costs no memory before the first run, math.huge runs until a seed fails", function()
      -- (1e7 first: were the seeds listed, this fails before math.huge could eat the memory)
      collectgarbage()
      local before = collectgarbage("count")
      local first
      sim.explore(1e7, function(s)
        first = first or collectgarbage("count") - before
        if s == 2 then error("stop") end
      end)
      assert.is_true(first < 2048, "KB before the first run: " .. first) -- (a list of 1e7 seeds: 256 MB)
      local seen = {}
      local seed, err = sim.explore(math.huge, function(s)
        seen[#seen + 1] = s
        if s == 4 then error("fails at 4", 0) end
      end)
      assert.equal(4, seed)
      assert.equal("fails at 4", err)
      assert.same({ 1, 2, 3, 4 }, seen)
      assert.is_nil(sim.explore(0, function() error("never") end))
      assert.is_false(sim.active())
    end)
  end)

  describe("cut", function()
    it("needs an address; a port must be an integer in 0..65535", function()
      sim.on()
      has(err_of(sim.cut), "bad argument #1 to 'cosock.sim.cut' (address expected, got nil)")
      has(err_of(sim.cut, 7), "bad argument #1 to 'cosock.sim.cut' (address expected, got 7)")
      has(err_of(sim.cut, "10.0.0.2", 1.5), "bad argument #2 to 'cosock.sim.cut' (port (an integer 0 to 65535) or nil expected, got 1.5)")
      has(err_of(sim.cut, "10.0.0.2", 0 / 0), "got NaN)")
      has(err_of(sim.cut, "10.0.0.2", 70000), "got 70000)")
      assert.equal(0, sim.cut("10.0.0.2"))
    end)
  end)

  describe("on and the others", function()
    it("refuses non-finite clocks and epochs, and a record that is not a boolean", function()
      has(err_of(sim.on, { clock = math.huge }), "cosock.sim.on: clock must be a finite number from -1e9 to 1e9 (got inf)")
      has(err_of(sim.on, { clock = 0 / 0 }), "cosock.sim.on: clock must be a finite number from -1e9 to 1e9 (got NaN)")
      has(err_of(sim.on, { epoch = -math.huge }), "cosock.sim.on: epoch must be a finite number from -1e11 to 1e11 (got -inf)")
      has(err_of(sim.on, { epoch = "x" }), "cosock.sim.on: epoch must be a finite number from -1e11 to 1e11 (got \"x\")")
      has(err_of(sim.on, { seed = 0 / 0 }), "cosock.sim.on: seed must be an integer (got NaN)")
      has(err_of(sim.on, { seed = math.huge }), "cosock.sim.on: seed must be an integer (got inf)")
      has(err_of(sim.on, { record = 1 }), "cosock.sim.on: record must be a boolean (got 1)")
      has(err_of(sim.on, { timout = 1 }), "cosock.sim.on: unknown option 'timout'")
      has(err_of(sim.on, { link = { segment = 1.5 } }), "cosock.sim.on: link option 'segment' must be an integer")
      has(err_of(sim.on, { link = { sndbuf = 0 / 0 } }), "cosock.sim.on: link option 'sndbuf'")
      has(err_of(sim.on, { link = { latency = math.huge } }), "cosock.sim.on: link option 'latency' out of range")
      assert.is_false(sim.active())
    end)

    it("blackhole's switch is a boolean, transcript's filter a table", function()
      sim.on()
      has(err_of(sim.blackhole, "10.0.0.2", 1), "bad argument #2 to 'cosock.sim.blackhole' (boolean or nil expected, got 1)")
      has(err_of(sim.blackhole, nil), "bad argument #1 to 'cosock.sim.blackhole' (address expected, got nil)")
      has(err_of(sim.transcript, "connect"), "bad argument #1 to 'cosock.sim.transcript' (table or nil expected, got \"connect\")")
      has(err_of(sim.link, 1, "b", {}), "bad argument #1 to 'cosock.sim.link' (address expected, got 1)")
    end)
  end)

  describe("a host loop", function()
    it("pollfd raises while the simulation is on; step(next_timeout()) moves the virtual clock", function()
      sim.on()
      has(err_of(cosock.pollfd), "cosock.pollfd: not available while cosock.sim is on")
      local at
      cosock.spawn(function() socket.sleep(5); at = sim.now() end, "sleeper")
      local steps = 0
      while cosock.step(cosock.next_timeout() or 0) do
        steps = steps + 1
        assert(steps < 10, "the clock does not move")
      end
      assert.equal(5, at)
    end)
  end)

  describe("simulated sockets", function()
    it("a method called with a dot says bad self, naming the method", function()
      sim.on()
      local t, u = socket.tcp(), socket.udp()
      for _, name in ipairs({ "receive", "send", "connect", "bind", "listen", "accept", "close",
                              "settimeout", "setwaker", "getfd", "getpeername", "setoption" }) do
        has(err_of(t[name]), "bad self to '" .. name .. "' (simulated tcp socket expected, got no value)")
      end
      for _, name in ipairs({ "receive", "receivefrom", "sendto", "send", "setsockname",
                              "setpeername", "close", "settimeout" }) do
        has(err_of(u[name]), "bad self to '" .. name .. "' (simulated udp socket expected, got no value)")
      end
      has(err_of(t.receive, u), "bad self to 'receive' (simulated tcp socket expected, got table)")
      t:close()
      u:close()
    end)

    it("byte counts: NaN and negative raise, a fraction is cut (as LuaSocket casts it); bad ports fail as a bad service does", function()
      sim.on()
      local r = {}
      cosock.spawn(function()
        local srv = assert(socket.bind("*", 80))
        local c = srv:accept()
        c:send("hello world\n")
        c:close()
        srv:close()
      end, "server")
      cosock.spawn(function()
        local c = assert(socket.connect("127.0.0.1", 80))
        c:settimeout(1)
        r.nan = err_of(c.receive, c, 0 / 0)
        r.neg = err_of(c.receive, c, -1)
        r.frac = c:receive(1.5)
        r.huge = { c:receive(math.huge) }
        local u, v = socket.udp(), socket.udp()
        r.sendto = { u:sendto("x", "127.0.0.1", 1.5) }
        r.sendto_nan = { u:sendto("x", "127.0.0.1", 0 / 0) }
        r.setsockname = { u:setsockname("127.0.0.1", 70000) }
        r.setpeername = { u:setpeername("127.0.0.1", -1) }
        r.bind = { socket.tcp():bind("127.0.0.1", 1.5) }
        r.connect = { socket.tcp():connect("127.0.0.1", 0 / 0) }
        assert(u:setsockname("127.0.0.1", 9))
        assert(v:sendto("abcdef", "127.0.0.1", 9))
        u:settimeout(1)
        r.dg = u:receive(2.7)
        r.dg_nan = err_of(u.receive, u, 0 / 0)
        r.dg_neg = err_of(u.receivefrom, u, -3)
        u:close()
        v:close()
        c:close()
      end, "client")
      cosock.run()
      has(r.nan, "bad argument #1 to 'receive' (invalid receive pattern)")
      has(r.neg, "bad argument #1 to 'receive' (invalid receive pattern)")
      assert.equal("h", r.frac)
      assert.same({ nil, "closed", "ello world\n" }, r.huge)
      assert.same({ nil, "Name or service not known" }, r.sendto)
      assert.same({ nil, "Name or service not known" }, r.sendto_nan)
      assert.same({ nil, "service not supported for socket type" }, r.setsockname)
      assert.same({ nil, "Name or service not known" }, r.setpeername)
      assert.same({ nil, "service not supported for socket type" }, r.bind)
      assert.same({ nil, "Name or service not known" }, r.connect)
      assert.equal("ab", r.dg)
      has(r.dg_nan, "bad argument #1 to 'receive' (byte count >= 0 expected, got NaN)")
      has(r.dg_neg, "bad argument #1 to 'receivefrom' (byte count >= 0 expected, got -3)")
    end)
  end)
end)
