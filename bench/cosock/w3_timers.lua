-- W3 timers, cosock: TASKS tasks each doing 10 sleeps of a seeded random
-- length in [0, 20 ms]; lateness = wake time - requested deadline, both
-- taken with socket.gettime().
-- Usage: w3_timers.lua [TASKS]   (default 5000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local make_plan = require "w3_plan"

local W, IMPL = "w3", "cosock-native"
local TASKS = B.argnum(1, 5000)
local SLEEPS, MAXLEN = 10, 0.020

B.guard(W, IMPL, function()
  local plan = make_plan(TASKS, SLEEPS, MAXLEN)
  local now, sleep = cosock.socket.gettime, cosock.socket.sleep
  local done, late_sum, late_max, late_min = 0, 0.0, -math.huge, math.huge
  for t = 1, TASKS do
    local base = (t - 1) * SLEEPS
    cosock.spawn(function()
      for k = 1, SLEEPS do
        local d = plan[base + k]
        local deadline = now() + d
        sleep(d)
        local late = now() - deadline
        late_sum = late_sum + late
        if late > late_max then late_max = late end
        if late < late_min then late_min = late end
        done = done + 1
      end
    end, "sleeper")
  end
  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if done ~= TASKS * SLEEPS then
    B.fail(W, IMPL, ("%d sleeps completed, want %d"):format(done, TASKS * SLEEPS))
  end
  if late_min < -0.001 then
    B.fail(W, IMPL, ("a sleep returned %.3f ms before its deadline"):format(-late_min * 1e3))
  end
  B.result(W, IMPL, {
    { "ops", done }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", done / wall }, { "late_ms", late_sum / done * 1e3 },
    { "late_max_ms", late_max * 1e3 }, { "late_min_ms", late_min * 1e3 },
  })
end)
