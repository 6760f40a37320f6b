-- dns, cosock: name lookups in the loop (c-ares) against a DNS server in
-- another process on 127.0.0.1 (bench/lib/dns_server.lua).
--  1. LOOKUPS lookups of distinct names by CONC tasks at once: `rate` =
--     lookups per second (each one query and one answer).
--  2. A loopback ping-pong of ROUNDS round trips alone, then again while
--     PENDING tasks keep a lookup waiting each (answers 0.2 s late, asked
--     again at once): `pp_rate` and `pp_pending_rate` round trips per second,
--     `ratio` the second over the first (1.0: pending lookups cost nothing).
-- Usage: dns_lookups.lua [LOOKUPS] [CONC] [ROUNDS] [PENDING]   (default 20000 100 20000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local core = require "cosock.core"
local socket = cosock.socket

local W, IMPL = "dns", "cosock-native"
local LOOKUPS = B.argnum(1, 20000)
local CONC = B.argnum(2, 100)
local ROUNDS = B.argnum(3, 20000)
local PENDING = B.argnum(4, 100)

-- One ping-pong of ROUNDS round trips; returns round trips per second.
local function pingpong()
  local server = assert(socket.bind("127.0.0.1", 0))
  local port = select(2, server:getsockname())
  cosock.spawn(function()
    local c = assert(server:accept())
    server:close()
    while true do
      local line = c:receive("*l")
      if line == nil then break end
      assert(c:send("pong\n"))
    end
    c:close()
  end, "pong")
  local c = assert(socket.connect("127.0.0.1", port))
  local t0 = B.now()
  for _ = 1, ROUNDS do
    assert(c:send("ping\n"))
    assert(c:receive("*l") == "pong")
  end
  local rate = ROUNDS / (B.now() - t0)
  c:close()
  return rate
end

B.guard(W, IMPL, function()
  if core.dns ~= "c-ares" then B.fail(W, IMPL, "built without c-ares") end
  local dir = arg[0]:match("^(.*/)") or "./"
  local srv = assert(io.popen(B.interpreter() .. " " .. string.format("%q", dir .. "../lib/dns_server.lua") .. " 0.2", "r"))
  local port = tonumber((srv:read("*l") or ""):match("^PORT (%d+)"))
  if not port then B.fail(W, IMPL, "the DNS server did not start") end
  assert(socket.dns.configure { servers = { "127.0.0.1:" .. port }, timeout = 2, tries = 2 })

  local res = {}
  local t0, c0 = B.now(), B.cpu()
  cosock.spawn(function()
    -- 1. lookups per second
    local done, failed = 0, 0
    local lt0 = B.now()
    for t = 1, CONC do
      cosock.spawn(function()
        for i = t, LOOKUPS, CONC do
          if socket.dns.toip("n" .. i .. ".bench") == "127.0.0.1" then done = done + 1 else failed = failed + 1 end
        end
      end, "lookups " .. t)
    end
    while done + failed < LOOKUPS do socket.sleep(0.001) end
    res.rate = LOOKUPS / (B.now() - lt0)
    if failed > 0 then B.fail(W, IMPL, failed .. " lookups failed") end
    -- 2. ping-pong alone, then beside PENDING waiting lookups
    res.pp = pingpong()
    local stop, asked = false, 0
    for t = 1, PENDING do
      cosock.spawn(function()
        while not stop do
          asked = asked + 1
          socket.dns.toip("slow" .. t .. ".bench")
        end
      end, "pending " .. t)
    end
    while core.dns_stats().lookups < PENDING do socket.sleep(0.001) end
    res.pp_pending = pingpong()
    res.pending_seen = core.dns_stats().lookups
    stop = true
    while core.dns_stats().lookups > 0 do socket.sleep(0.01) end
  end, "main")
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local quit = assert(require("socket").udp())
  quit:sendto("QUIT", "127.0.0.1", port)
  quit:close()
  srv:close()
  B.result(W, IMPL, {
    { "ops", LOOKUPS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", res.rate }, { "pp_rate", res.pp }, { "pp_pending_rate", res.pp_pending },
    { "ratio", res.pp_pending / res.pp },
    { "pending", res.pending_seen },
  })
end)
