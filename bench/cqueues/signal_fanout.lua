-- signal_fanout, cqueues: the same rounds as bench/cosock/signal_fanout.lua
-- with a cqueues.condition: N coroutines loop on cond:wait(), the driver
-- calls cond:signal() (which wakes every waiter) and waits on a second
-- condition that the last woken waiter of a round signals. The unrelated
-- coroutines wait on a third condition. Figures as there.
-- Usage: signal_fanout.lua [N] [ROUNDS] [UNRELATED]   (default 10000 20 10000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local condition = require "cqueues.condition"

local W, IMPL = "signal_fanout", "cqueues"
local N = B.argnum(1, 10000)
local ROUNDS = B.argnum(2, 20)
local UNRELATED = B.argnum(3, 10000)

local function fanout(unrelated)
  local cq = cqueues.new()
  local go, done, other = condition.new(), condition.new(), condition.new()
  local round, got, st = 0, 0, {}
  for _ = 1, unrelated do cq:wrap(function() other:wait() end) end
  for _ = 1, N do
    cq:wrap(function()
      for r = 1, ROUNDS do
        go:wait()
        if round ~= r then error(("round %d: saw %d"):format(r, round)) end
        got = got + 1
        if got == N * r then done:signal() end
      end
    end)
  end
  cq:wrap(function()
    cqueues.sleep(0)
    st.t0, st.c0 = B.now(), B.cpu()
    for r = 1, ROUNDS do
      round = r
      go:signal()
      done:wait()
    end
    st.t1, st.c1 = B.now(), B.cpu()
    other:signal()
  end)
  assert(cq:loop())
  if got ~= N * ROUNDS then B.fail(W, IMPL, ("%d of %d wakes"):format(got, N * ROUNDS)) end
  return st.t1 - st.t0, st.c1 - st.c0
end

B.guard(W, IMPL, function()
  local wall, cpu = fanout(0)
  local wall2, cpu2 = fanout(UNRELATED)
  local wakes = N * ROUNDS
  B.result(W, IMPL, {
    { "ops", wakes }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", wakes / wall }, { "ns_per_wake", wall / wakes * 1e9 },
    { "ratio", wall / wall2 }, { "cpu_ratio", cpu / cpu2 },
  })
end)
