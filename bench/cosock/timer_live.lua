-- timer_live, cosock: the per-pass cost of the loop while LIVE timer objects
-- wait on the heap. Two tasks play ping-pong over two channels (every round
-- trip is two passes of the loop), while DUE timer objects come due during
-- the exchange (their wakers count them: "a few due").
-- The same process runs the exchange twice: run #1 with one far timer
-- (3600 s) beside the DUE ones, run #2 with LIVE far timers. `rate` is run
-- #2's round trips/s, `base_rate` run #1's, `ratio` = rate / base_rate (1.0:
-- the far timers cost nothing per pass), `cpu_ratio` the same in CPU time;
-- `create_rate` is how many timer objects per second were made for run #2.
-- Usage: timer_live.lua [ROUNDS] [LIVE] [DUE]   (default 100000 100000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local timer = cosock.timer

local W, IMPL = "timer_live", "cosock-native"
local ROUNDS = B.argnum(1, 100000)
local LIVE = B.argnum(2, 100000)
local DUE = B.argnum(3, 100)

-- One exchange with `far` far timers and DUE timers due within its first
-- 20 ms; returns round trips/s by wall and by CPU time.
local function exchange(far)
  local fired = 0
  for i = 1, DUE do
    local t = timer.create_oneshot(0.02 * i / DUE)
    t:setwaker("recvr", function() fired = fired + 1 end)
  end
  local ping_tx, ping_rx = cosock.channel.new()
  local pong_tx, pong_rx = cosock.channel.new()
  local st = {}
  cosock.spawn(function()
    for _ = 1, ROUNDS do
      local v = ping_rx:receive()
      pong_tx:send(v)
    end
  end, "ponger")
  cosock.spawn(function()
    st.t0, st.c0 = B.now(), B.cpu()
    for i = 1, ROUNDS do
      ping_tx:send(i)
      if pong_rx:receive() ~= i then error("round " .. i .. " answered wrong") end
    end
    st.t1, st.c1 = B.now(), B.cpu()
  end, "pinger")
  cosock.run()
  if fired ~= DUE then B.fail(W, IMPL, ("%d of %d due timers fired"):format(fired, DUE)) end
  local armed = require("cosock.core").stats().timers
  if armed ~= #far then B.fail(W, IMPL, ("%d timers armed after the run, want %d"):format(armed, #far)) end
  return ROUNDS / (st.t1 - st.t0), ROUNDS / (st.c1 - st.c0), st
end

B.guard(W, IMPL, function()
  local far = { timer.create_oneshot(3600) }
  local base_rate, base_cpu = exchange(far)
  far[1]:cancel()
  far = {}
  local t0 = B.now()
  for i = 1, LIVE do far[i] = timer.create_oneshot(3600 + i % 1000) end
  local create_rate = LIVE / (B.now() - t0)
  local rate, cpu_rate, st = exchange(far)
  for i = 1, LIVE do far[i]:cancel() end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "live", LIVE }, { "wall", st.t1 - st.t0 }, { "cpu", st.c1 - st.c0 },
    { "rss_kb", B.rss_kb() }, { "rate", rate }, { "base_rate", base_rate },
    { "ratio", rate / base_rate }, { "cpu_ratio", cpu_rate / base_cpu },
    { "create_rate", create_rate },
  })
end)
