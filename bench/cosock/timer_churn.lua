-- timer_churn, cosock: timer objects made and cancelled at a high rate.
-- A task makes N oneshot timers (deadlines 1-2 s ahead, so none fires) and
-- cancels each one WINDOW timers later, keeping WINDOW of them on the heap;
-- the rest are cancelled at the end and nothing may be left armed. Half of
-- them are collected without a cancel instead (dropped while armed: __gc
-- takes them off the heap), so both ways out are measured.
-- `rate` = timers made (and got rid of) per second; `ns_per_timer` the same
-- as a cost.
-- Usage: timer_churn.lua [N] [WINDOW]   (default 200000 1000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local timer = cosock.timer

local W, IMPL = "timer_churn", "cosock-native"
local N = B.argnum(1, 200000)
local WINDOW = B.argnum(2, 1000)

B.guard(W, IMPL, function()
  local stats = require("cosock.core").stats
  local peak = 0
  cosock.spawn(function()
    local ring = {}
    for i = 1, N do
      local slot = i % WINDOW + 1
      local old = ring[slot]
      if old ~= nil and i % 2 == 0 then old:cancel() end -- else: dropped, collected later
      ring[slot] = timer.create_oneshot(1 + (i % 997) / 997)
      if i % 4096 == 0 then cosock.socket.sleep(0) end   -- let the loop run now and then
    end
    peak = stats().timers
    for slot = 1, WINDOW do
      if ring[slot] then ring[slot]:cancel() end
    end
  end, "churner")
  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  collectgarbage()
  collectgarbage()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local left = stats().timers
  if left ~= 0 then B.fail(W, IMPL, ("%d timers still armed at the end"):format(left)) end
  if peak < WINDOW then B.fail(W, IMPL, ("only %d timers were armed at the peak"):format(peak)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", N / wall }, { "ns_per_timer", wall / N * 1e9 }, { "peak", peak },
  })
end)
