-- timer_live, cqueues: the per-pass cost of the loop while LIVE timeouts are
-- pending. cqueues has no timer objects, so a "live timer" here is a
-- coroutine in cqueues.poll(cond, 3600 + ...) (its timeout in cqueues' timer
-- structure), released at the end by signalling its condition; the DUE timers
-- are coroutines sleeping 0-20 ms. The ping-pong is two coroutines over two
-- lib/cq_channel.lua channels. Loop #1 has one far timeout beside the DUE
-- ones, loop #2 LIVE: `ratio` = loop #2's round trips/s / loop #1's;
-- `create_rate` = live timeouts set up per second (coroutines wrapped and run
-- to their poll).
-- Usage: timer_live.lua [ROUNDS] [LIVE] [DUE]   (default 100000 100000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local condition = require "cqueues.condition"
local channel = require "cq_channel"

local W, IMPL = "timer_live", "cqueues"
local ROUNDS = B.argnum(1, 100000)
local LIVE = B.argnum(2, 100000)
local DUE = B.argnum(3, 100)

-- Parks n coroutines on one condition with far timeouts; returns a function
-- that releases them and one that counts the released.
local function park(cq, n)
  local cond, released, woke_early = condition.new(), false, 0
  local done = 0
  for i = 1, n do
    cq:wrap(function()
      cqueues.poll(cond, 3600 + i % 1000)
      if released then done = done + 1 else woke_early = woke_early + 1 end
    end)
  end
  return function() released = true; cond:signal() end,
         function() return done, woke_early end
end

local function exchange(cq, release)
  local fired = 0
  for i = 1, DUE do
    cq:wrap(function()
      cqueues.sleep(0.02 * i / DUE)
      fired = fired + 1
    end)
  end
  local ping, pong = channel.new(), channel.new()
  local st = {}
  cq:wrap(function()
    for _ = 1, ROUNDS do pong:send(ping:receive()) end
  end)
  cq:wrap(function()
    st.t0, st.c0 = B.now(), B.cpu()
    for i = 1, ROUNDS do
      ping:send(i)
      if pong:receive() ~= i then error("round " .. i .. " answered wrong") end
    end
    st.t1, st.c1 = B.now(), B.cpu()
    release()
  end)
  local ok, err = cq:loop()
  if not ok then B.fail(W, IMPL, err) end
  if fired ~= DUE then B.fail(W, IMPL, ("%d of %d due timers fired"):format(fired, DUE)) end
  return ROUNDS / (st.t1 - st.t0), ROUNDS / (st.c1 - st.c0), st
end

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local release1, count1 = park(cq, 1)
  assert(cq:step(0))
  local base_rate, base_cpu = exchange(cq, release1)
  local t0 = B.now()
  local release2, count2 = park(cq, LIVE)
  assert(cq:step(0))                           -- every parked coroutine reaches its poll
  local create_rate = LIVE / (B.now() - t0)
  local rate, cpu_rate, st = exchange(cq, release2)
  local d1, e1 = count1()
  local d2, e2 = count2()
  if d1 ~= 1 or d2 ~= LIVE or e1 + e2 ~= 0 then
    B.fail(W, IMPL, ("released %d+%d of 1+%d, %d woke early"):format(d1, d2, LIVE, e1 + e2))
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "live", LIVE }, { "wall", st.t1 - st.t0 }, { "cpu", st.c1 - st.c0 },
    { "rss_kb", B.rss_kb() }, { "rate", rate }, { "base_rate", base_rate },
    { "ratio", rate / base_rate }, { "cpu_ratio", cpu_rate / base_cpu },
    { "create_rate", create_rate },
  })
end)
