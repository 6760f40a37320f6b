-- pred_wait, cosock: cosock.when.wait with N tasks waiting on predicates that
-- stay false (each task its own closure over its own state, as real waiters
-- have), in one process:
--   1. per pass: a ping-pong over two channels (ROUNDS round trips, two
--      passes each) runs first with no predicate waiting, then beside the N
--      waiters, whose predicates the loop evaluates once per pass. `pass_us`
--      is the extra wall time per pass, `ns_per_pred` that divided by N,
--      `ratio` the round-trip rate with the waiters over the rate without
--      (`cpu_ratio` the same on a CPU-time basis).
--   2. idle: the N waiters and one task sleeping IDLE seconds, nothing else:
--      the loop evaluates the predicates every 10 ms (cosock.when's default
--      interval). `idle_cpu_pct` is the process's CPU time over the sleep as
--      a percentage of it; `idle_cpu_small_pct` the same with SMALL waiters.
-- Then every predicate turns true and every waiter must end. `rate` is
-- predicate evaluations per second during the ping-pong with the waiters.
-- Usage: pred_wait.lua [N] [ROUNDS] [IDLE] [SMALL]   (default 10000 500 3 10)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local when = cosock.when

local W, IMPL = "pred_wait", "cosock-native"
local N = B.argnum(1, 10000)
local ROUNDS = B.argnum(2, 500)
local IDLE = B.argnum(3, 3)
local SMALL = B.argnum(4, 10)

local calls, ended = 0, 0

-- n waiters, each on a predicate over its own box; returns the boxes.
local function waiters(n)
  local boxes = {}
  for i = 1, n do
    local box = { ready = false }
    boxes[i] = box
    cosock.spawn(function()
      local v = when.wait(function() calls = calls + 1; return box.ready end)
      if v ~= true then error("waiter " .. i .. " got " .. tostring(v)) end
      ended = ended + 1
    end, "waiter")
  end
  return boxes
end

local function release(boxes)
  local before = ended
  for _, box in ipairs(boxes) do box.ready = true end
  when.wait(function() return ended == before + #boxes end, 5)
  if ended ~= before + #boxes then B.fail(W, IMPL, ("%d of %d waiters ended"):format(ended - before, #boxes)) end
end

-- ROUNDS round trips over two channels; returns wall and CPU seconds.
local function pingpong()
  local ping_tx, ping_rx = cosock.channel.new()
  local pong_tx, pong_rx = cosock.channel.new()
  cosock.spawn(function()
    for _ = 1, ROUNDS do pong_tx:send(ping_rx:receive()) end
  end, "ponger")
  local t0, c0 = B.now(), B.cpu()
  for i = 1, ROUNDS do
    ping_tx:send(i)
    if pong_rx:receive() ~= i then error("round " .. i .. " answered wrong") end
  end
  return B.now() - t0, B.cpu() - c0
end

-- CPU time over an IDLE-second sleep, in percent of it.
local function idle_cpu()
  local t0, c0 = B.now(), B.cpu()
  cosock.socket.sleep(IDLE)
  return 100 * (B.cpu() - c0) / (B.now() - t0)
end

B.guard(W, IMPL, function()
  local r = {}
  cosock.spawn(function()
    r.base_wall, r.base_cpu = pingpong()
    local boxes = waiters(N)
    cosock.socket.sleep(0) -- they park, after one call each
    local calls0 = calls
    r.wall, r.cpu = pingpong()
    r.evals = calls - calls0
    r.idle = idle_cpu()
    release(boxes)
    boxes = waiters(SMALL)
    cosock.socket.sleep(0)
    r.idle_small = idle_cpu()
    release(boxes)
  end, "controller")
  cosock.run()
  local passes = 2 * ROUNDS
  B.result(W, IMPL, {
    { "ops", N }, { "wall", r.wall }, { "cpu", r.cpu }, { "rss_kb", B.rss_kb() },
    { "rate", r.evals / r.wall }, { "ratio", r.base_wall / r.wall }, { "cpu_ratio", r.base_cpu / r.cpu },
    { "pass_us", (r.wall - r.base_wall) / passes * 1e6 },
    { "ns_per_pred", (r.wall - r.base_wall) / passes / N * 1e9 },
    { "evals_per_pass", r.evals / passes },
    { "idle_cpu_pct", r.idle }, { "idle_cpu_small_pct", r.idle_small }, { "small", SMALL },
  })
end)
