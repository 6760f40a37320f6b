-- switch_cost, cosock: what cosock.set_accounting(true) or a watchdog
-- (cosock.set_watchdog, a limit nothing reaches) costs a workload, paired in
-- one process: the workload runs PAIRS times with the switch off and PAIRS
-- times with it on, alternating (off-on, on-off, ...), so that load changes
-- on the machine move both alike. `rate` is the median rate with the switch
-- on, `base_rate` off; `ratio` is the median of the per-pair ratios on/off
-- by wall time (1.0: free), `cpu_ratio` the same by CPU time.
-- SWITCH: acct | wd | trace (cosock.trace.start with a buffer that holds
--         every event of the run, 2^20) | tasks (the turn stamps cosock.tasks
--         keeps once loaded) | twarn (cosock.tasks.warnings with every warning
--         on, limits nothing reaches; the stamps on both sides)
-- MODE:   chan  two tasks play ping-pong over two channels, ROUNDS round
--               trips (two passes and two resumes each): the per-resume cost
--         tcp   W1's ping-pong on a loopback TCP connection, ROUNDS round trips
--         fanin W4's fan-in: 100 clients on loopback TCP, ROUNDS requests in
--               all (ROUNDS / 100 each) to one server task per connection
--         lua   one task does ROUNDS turns of 1,000 iterations of Lua
--               arithmetic (yielding with sleep(0) between turns): the cost
--               per VM instruction (a count hook makes Lua check every one)
-- Usage: switch_cost.lua SWITCH MODE [ROUNDS] [PAIRS]
--        (default ROUNDS: chan 50000, tcp 10000, fanin 10000, lua 3000; PAIRS 5)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local SWITCH, MODE = arg[1] or "acct", arg[2] or "chan"
local W, IMPL = SWITCH .. "_" .. MODE, "cosock-native"
local DEFAULT = { chan = 50000, tcp = 10000, fanin = 10000, lua = 3000 }
local SWITCHES = { acct = true, wd = true, trace = true, tasks = true, twarn = true }
if not DEFAULT[MODE] or not SWITCHES[SWITCH] then
  B.fail(W, IMPL, "usage: switch_cost.lua acct|wd|trace|tasks|twarn chan|tcp|fanin|lua [ROUNDS] [PAIRS]")
end
local ROUNDS = B.argnum(3, DEFAULT[MODE])
local PAIRS = B.argnum(4, 5)

local trace = SWITCH == "trace" and require "cosock.trace"
local function set(on)
  if SWITCH == "acct" then cosock.set_accounting(on)
  elseif trace then
    trace.stop()
    if on then trace.start({ size = 2 ^ 20 }) end
  elseif SWITCH == "tasks" then require "cosock.tasks"; require("cosock.core").tasks_stamps(on)
  elseif SWITCH == "twarn" then
    require("cosock.tasks").warnings(on and { turn = 3600, ready = 3600, unwakeable = true,
      leftover = true } or false)
  else cosock.set_watchdog(on and 3600 or nil, "error") end
end

local workloads = {}

function workloads.chan()
  local ping_tx, ping_rx = cosock.channel.new()
  local pong_tx, pong_rx = cosock.channel.new()
  cosock.spawn(function()
    for _ = 1, ROUNDS do pong_tx:send(ping_rx:receive()) end
  end, "ponger")
  cosock.spawn(function()
    for i = 1, ROUNDS do
      ping_tx:send(i)
      if pong_rx:receive() ~= i then error("round " .. i .. " answered wrong") end
    end
  end, "pinger")
end

function workloads.tcp()
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  cosock.spawn(function()
    local c = assert(server:accept())
    server:close()
    while true do
      local line = c:receive("*l")
      if line == nil then break end
      assert(c:send("pong\n"))
    end
    c:close()
  end, "server")
  cosock.spawn(function()
    local c = assert(socket.connect("127.0.0.1", tonumber(port)))
    for _ = 1, ROUNDS do
      assert(c:send("ping\n"))
      if c:receive("*l") ~= "pong" then error("bad answer") end
    end
    c:close()
  end, "client")
end

function workloads.fanin()
  local CLIENTS = 100
  local server = assert(socket.bind("127.0.0.1", 0, CLIENTS))
  local _, port = server:getsockname()
  cosock.spawn(function()
    for _ = 1, CLIENTS do
      local c = assert(server:accept())
      cosock.spawn(function()
        while true do
          local line = c:receive("*l")
          if line == nil then break end
          assert(c:send(line .. "\n"))
        end
        c:close()
      end, "handler")
    end
    server:close()
  end, "acceptor")
  for _ = 1, CLIENTS do
    cosock.spawn(function()
      local c = assert(socket.connect("127.0.0.1", tonumber(port)))
      for i = 1, math.floor(ROUNDS / CLIENTS) do
        assert(c:send(i .. "\n"))
        if c:receive("*l") ~= tostring(i) then error("bad answer") end
      end
      c:close()
    end, "client")
  end
end

local sum = 0
function workloads.lua()
  cosock.spawn(function()
    local x = 0
    for _ = 1, ROUNDS do
      for i = 1, 1000 do x = (x + i * 3) % 1000003 end
      socket.sleep(0)
    end
    sum = sum + x
  end, "worker")
end

-- One run of the workload; returns rounds/s by wall and by CPU time.
local function once(on)
  set(on)
  workloads[MODE]()
  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  set(false)
  local st = require("cosock.core").stats()
  if st.tasks ~= 0 then B.fail(W, IMPL, st.tasks .. " tasks left after a run") end
  return ROUNDS / wall, ROUNDS / cpu, wall, cpu
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) / 2] or (t[n / 2] + t[n / 2 + 1]) / 2
end

B.guard(W, IMPL, function()
  once(false)                                  -- warm up (and load what it needs)
  local rates, bases, ratios, cpu_ratios = {}, {}, {}, {}
  local wall, cpu = 0, 0
  for p = 1, PAIRS do
    local r = {}
    for _, on in ipairs(p % 2 == 1 and { false, true } or { true, false }) do
      local rw, rc, w, c = once(on)
      r[on] = { rw, rc }
      if on then wall, cpu = wall + w, cpu + c end
    end
    rates[p], bases[p] = r[true][1], r[false][1]
    ratios[p] = r[true][1] / r[false][1]
    cpu_ratios[p] = r[true][2] / r[false][2]
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS * PAIRS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", median(rates) }, { "base_rate", median(bases) },
    { "ratio", median(ratios) }, { "cpu_ratio", median(cpu_ratios) },
  })
end)
