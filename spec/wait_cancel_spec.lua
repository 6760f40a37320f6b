-- Every kind of wait, in a cancelled scope, raises the cancellation
-- (doc/structured-concurrency.md; issue 35, issue 38). One table of cases:
-- each wait kind there runs through the same three ways a scope ends a
-- wait: cancelled before the wait begins, cancelled while it waits, and
-- its deadline passing while it waits. A wait that returned ("timeout",
-- nil, a message) instead of raising fails.
--
-- So that no kind of wait can miss it, the table is checked against the
-- code: every C continuation of a wait (the k of each cn_yieldk in src/)
-- and every Lua file that yields to the loop must be named by a case (or
-- by NOT_WAITS, with the reason). A new wait makes this spec fail until
-- it has its case here, and then the case says whether it raises.

local cosock = require "cosock"
local core = require "cosock.core"
local scope = require "cosock.scope"
local sim = require "cosock.sim"
local op = require "cosock.op"
local sync = require "cosock.sync"
local signal = require "cosock.signal"
local when = require "cosock.when"
local compat = require "cosock.compat"
local luasocket = require "socket"

local pack = compat.pack
local pcall = compat.pcall -- (a pcall a task may wait in, on Lua 5.1 too)
local sleep = cosock.socket.sleep
local CANCELLED = scope.cancelled

local root = (debug.getinfo(1, "S").source:match("^@(.*)spec/[^/]*$") or "./")

-- A task that waits until cancelled through its handle (a counterpart some
-- cases need: a holder, a task to join).
local function idle_task(name, fn)
  return cosock.spawn(function()
    if fn then fn() end
    sleep(nil)
  end, name)
end

-- Inside a task: a connected pair of tcp sockets (client, server side) at
-- address and port (the simulated network's, or a real one on 127.0.0.1).
local function tcp_pair(address, port)
  local srv = assert(cosock.socket.bind(address, port or 0))
  local c = assert(cosock.socket.tcp())
  assert(c:connect(address, select(2, srv:getsockname())))
  local s = assert(srv:accept())
  srv:close()
  return c, s
end

-- The cases. prepare() runs in a task of no scope and returns wait (one
-- call of it waits until something ends it: nothing in the case will) and
-- an optional done (cleanup after the scope ended). covers: the wait sites
-- (below) the case goes through.
local CASES = {
  {
    kind = "tcp receive",
    covers = { "src/features/wrapper.c:receive_k" },
    prepare = function()
      local c, s = tcp_pair("127.0.0.1")
      return function() return c:receive() end, function() c:close(); s:close() end
    end,
  },
  {
    kind = "tcp send",
    covers = { "src/features/wrapper.c:send_k" },
    prepare = function()
      local c, s = tcp_pair("127.0.0.1")
      -- Small kernel buffers, so that a few sends fill them (where LuaSocket
      -- cannot set them, more sends do).
      c:setoption("send-buffer-size", 4096)
      s:setoption("recv-buffer-size", 4096)
      local chunk = ("x"):rep(65536)
      return function()
        for _ = 1, 1000 do assert(c:send(chunk)) end -- (the peer reads nothing)
        error("the send never waited")
      end, function() c:close(); s:close() end
    end,
  },
  {
    kind = "tcp accept",
    covers = { "src/features/wrapper.c:wait_k" },
    prepare = function()
      local srv = assert(cosock.socket.bind("127.0.0.1", 0))
      return function() return srv:accept() end, function() srv:close() end
    end,
  },
  {
    kind = "udp receive",
    covers = { "src/features/wrapper.c:receive_k" },
    prepare = function()
      local u = assert(cosock.socket.udp())
      assert(u:setsockname("127.0.0.1", 0))
      return function() return u:receive() end, function() u:close() end
    end,
  },
  {
    kind = "select on an object of the program's own (setwaker)",
    covers = { "src/loop/park.c:yield_k", "lua/cosock/socket.lua" },
    prepare = function()
      -- A new kind of wait, made through the public API alone: nothing in
      -- it says anything of cancellation.
      local obj = { setwaker = function(self, kind, fn) self.waker = fn end }
      return function() return cosock.socket.select({ obj }, nil, nil) end
    end,
  },
  {
    kind = "sleep",
    covers = { "src/loop/park.c:yield_k", "lua/cosock/socket.lua" },
    prepare = function() return function() sleep(3600) end end,
  },
  {
    kind = "copas.sleep (cosock.copas) in a task",
    covers = { "src/loop/park.c:yield_k", "lua/cosock/copas.lua" },
    prepare = function()
      local copas = require "cosock.copas"
      return function() copas.sleep(3600) end
    end,
  },
  {
    kind = "channel receive",
    covers = { "src/features/channel.c:recv_k" },
    prepare = function()
      local _, rx = cosock.channel.new()
      return function() return rx:receive() end
    end,
  },
  {
    kind = "bounded channel send (full)",
    covers = { "src/features/channel.c:send_k" },
    prepare = function()
      local tx, rx = cosock.channel.new(1)
      assert(tx:send("fills it"))
      return function() return tx:send("waits") end, function() rx:close() end
    end,
  },
  {
    kind = "rendezvous send",
    covers = { "src/features/channel.c:send_k" },
    prepare = function()
      local tx, rx = cosock.channel.new(0)
      return function() return tx:send("waits") end, function() rx:close() end
    end,
  },
  {
    kind = "op: receive alone (perform's solo wait)",
    covers = { "lua/cosock/op/recv.lua" },
    prepare = function()
      local _, rx = cosock.channel.new()
      return function() return op.recv(rx):perform() end
    end,
  },
  {
    kind = "op: a choice of receives",
    covers = { "src/features/channel_op.c:park_k", "lua/cosock/op/perform.lua" },
    prepare = function()
      local _, rx1 = cosock.channel.new()
      local _, rx2 = cosock.channel.new()
      return function() return op.choice(op.recv(rx1), op.recv(rx2)):perform() end
    end,
  },
  {
    kind = "op: a choice with a send and a timer",
    covers = { "lua/cosock/op/perform.lua" },
    prepare = function()
      local tx = cosock.channel.new(0)
      return function()
        return op.choice(op.send(tx, "m"), op.sleep(3600), op.never()):perform()
      end
    end,
  },
  {
    kind = "lock acquire",
    covers = { "lua/cosock/sync.lua" },
    prepare = function()
      local lock = sync.lock()
      local holder = idle_task("holder", function() assert(lock:acquire()) end)
      sleep(0) -- (it holds the lock)
      return function() return lock:acquire() end, function() holder:cancel() end
    end,
  },
  {
    kind = "semaphore acquire",
    covers = { "lua/cosock/sync.lua" },
    prepare = function()
      local sem = sync.semaphore(1)
      local holder = idle_task("holder", function() assert(sem:acquire()) end)
      sleep(0) -- (it holds the permit)
      return function() return sem:acquire(3600) end, function() holder:cancel() end
    end,
  },
  {
    kind = "signal wait",
    covers = { "src/features/sigwait.c:wait_k" },
    prepare = function() return function() return signal.wait("never") end end,
  },
  {
    kind = "signal wait in a coroutine the task resumes (the node path)",
    covers = { "src/features/sigwait.c:park_k" },
    prepare = function()
      return function()
        local co = coroutine.create(function() return signal.wait("never") end)
        local r = pack(coroutine.resume(co))
        while coroutine.status(co) ~= "dead" do -- (its yields go on to the loop)
          r = pack(coroutine.resume(co, coroutine.yield(compat.unpack(r, 2, r.n))))
        end
        if not r[1] then error(r[2], 0) end
        return compat.unpack(r, 2, r.n)
      end
    end,
  },
  {
    kind = "when.wait",
    covers = { "src/features/predicate.c:wait_k" },
    prepare = function() return function() return when.wait(function() return false end) end end,
  },
  {
    kind = "join",
    covers = { "src/features/handle.c:join_k" },
    prepare = function()
      local h = idle_task("joined")
      return function() return h:join() end, function() h:cancel() end
    end,
  },
  {
    kind = "timer object wait",
    covers = { "lua/cosock/timer.lua" },
    prepare = function()
      local t = cosock.timer.create_oneshot(3600)
      return function() return t:wait() end, function() t:cancel() end
    end,
  },
  {
    kind = "timer.sleep_until",
    covers = { "lua/cosock/timer.lua" },
    prepare = function()
      return function() return cosock.timer.sleep_until(cosock.timer.now() + 3600) end
    end,
  },
  {
    kind = "ossignal receive",
    covers = { "lua/cosock/ossignal.lua" },
    prepare = function()
      local rx = cosock.ossignal.receiver("USR2")
      return function() return rx:receive() end, function() rx:close() end
    end,
  },
  {
    kind = "simulated tcp connect (to a black hole)",
    sim = true,
    covers = { "lua/cosock/sim/sock.lua" },
    prepare = function()
      sim.blackhole("10.9.9.9")
      local c = assert(cosock.socket.tcp())
      return function() return c:connect("10.9.9.9", 80) end, function() c:close() end
    end,
  },
  {
    kind = "simulated tcp accept",
    sim = true,
    covers = { "lua/cosock/sim/sock.lua" },
    prepare = function()
      local srv = assert(cosock.socket.bind("10.0.0.1", 8080))
      return function() return srv:accept() end, function() srv:close() end
    end,
  },
  {
    kind = "simulated tcp receive",
    sim = true,
    covers = { "lua/cosock/sim/sock.lua" },
    prepare = function()
      local c, s = tcp_pair("10.0.0.1", 8081)
      return function() return c:receive() end, function() c:close(); s:close() end
    end,
  },
  {
    kind = "simulated tcp send (its send buffer full)",
    sim = true,
    covers = { "lua/cosock/sim/sock.lua" },
    prepare = function()
      sim.link("10.0.0.1", "10.0.0.1", { bandwidth = 1000 }) -- (slow: the send buffer fills)
      local c, s = tcp_pair("10.0.0.1", 8082)
      local chunk = ("y"):rep(65536)
      return function()
        for _ = 1, 100 do assert(s:send(chunk)) end
        error("the send never waited")
      end, function() c:close(); s:close() end
    end,
  },
  {
    kind = "simulated udp receive",
    sim = true,
    covers = { "lua/cosock/sim/sock.lua" },
    prepare = function()
      local u = assert(cosock.socket.udp())
      assert(u:setsockname("10.0.0.1", 5353))
      return function() return u:receive() end, function() u:close() end
    end,
  },
}

if core.dns == "c-ares" then
  CASES[#CASES + 1] = {
    kind = "name lookup (a server that never answers)",
    covers = { "src/features/resolver.c:wait_k" },
    prepare = function()
      local mute = assert(luasocket.udp())
      assert(mute:setsockname("127.0.0.1", 0))
      assert(cosock.socket.dns.configure { servers = { "127.0.0.1:" .. select(2, mute:getsockname()) } })
      return function() return cosock.socket.dns.toip("never.answered.test") end,
        function() mute:close(); assert(cosock.socket.dns.configure {}) end
    end,
  }
end

-- Wait sites that are not waits of their own, and why.
local NOT_WAITS = {
  ["lua/cosock/compat.lua"] = "pcall on 5.1 forwards the waits of the function it calls",
  ["lua/cosock/scope.lua"] = "the scope's own wait for its tasks: what cancels them",
}

-- The wait sites in the code: "file:k" for each C continuation, and each
-- Lua file that yields to the loop.
local function wait_sites()
  local sites = {}
  local function lines(path)
    local f = assert(io.open(root .. path))
    local text = f:read("*a")
    f:close()
    return text
  end
  local list = assert(io.popen("cd '" .. root .. "' && ls src/*/*.c lua/cosock.lua lua/cosock/*.lua lua/cosock/*/*.lua"))
  for path in list:lines() do
    local text = lines(path)
    if path:match("%.c$") then
      for k in text:gmatch("cn_yieldk%(L, [^;]-, ([%w_]+)%)") do sites[path .. ":" .. k] = true end
    else
      for line in text:gmatch("[^\n]+") do
        local code = line:gsub("%-%-.*", "")
        if code:find("yield(", 1, true) and not code:find("function[%s%w_.:]*yield%(") then
          sites[path] = true
        end
      end
    end
  end
  list:close()
  return sites
end

-- Runs case in one of the three ways; returns what the wait's pcall gave.
local function run_case(case, how)
  cosock.reset()
  if case.sim then sim.on() end
  local got
  local function attempt(wait)
    local r = pack(pcall(wait))
    got = r
    if not r[1] then error(r[2], 0) end -- (on through the scope, as a task would)
  end
  cosock.spawn(function()
    local wait, done = case.prepare()
    if how == "cancelled before the wait" then
      scope.run(function(s)
        s:cancel()
        attempt(wait)
      end)
    elseif how == "cancelled during the wait" then
      scope.run(function(s)
        s:spawn(function() attempt(wait) end, "waiter")
        for _ = 1, 3 do sleep(0) end -- (the waiter is in its wait)
        s:cancel()
      end)
    else
      scope.timeout(0.005, function() attempt(wait) end)
    end
    if done then done() end
  end, "case")
  local ok, err = pcall(cosock.run)
  if case.sim then sim.off() end
  assert(ok, err)
  return got
end

describe("every kind of wait, in a cancelled scope", function()
  after_each(function() cosock.reset() end)

  it("the table of cases names every wait site of the code", function()
    local covered = {}
    for _, case in ipairs(CASES) do
      for _, site in ipairs(case.covers) do covered[site] = true end
    end
    local missing, sites = {}, wait_sites()
    for site in pairs(sites) do
      if not covered[site] and not NOT_WAITS[site] then missing[#missing + 1] = site end
    end
    table.sort(missing)
    assert.same({}, missing, "wait sites with no case in spec/wait_cancel_spec.lua")
    for site in pairs(covered) do
      assert.truthy(sites[site], "a case names a wait site that is gone: " .. site)
    end
  end)

  for _, how in ipairs { "cancelled before the wait", "cancelled during the wait", "deadline passing during the wait" } do
    for _, case in ipairs(CASES) do
      it(case.kind .. ": " .. how .. " raises the cancellation", function()
        local got = run_case(case, how)
        assert.truthy(got, "the wait was never made")
        assert.is_false(got[1], "the wait returned instead of raising")
        assert.equal(CANCELLED, got[2])
      end)
    end
  end
end)
