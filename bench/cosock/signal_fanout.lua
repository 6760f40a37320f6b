-- signal_fanout, cosock: cosock.signal.all to N waiters, ROUNDS times. Each
-- waiter loops on signal.wait("go") and checks it got the round's number;
-- the last one woken in a round raises "round done", on which the driver
-- waits before the next signal.all (which must return N). `rate` is wakes
-- per second (N * ROUNDS over the wall time of the rounds), `ns_per_wake`
-- the wall time per wake. The same process then does it again while
-- UNRELATED more tasks are parked on another signal: `ratio` = that rate
-- over the first (1.0: parked tasks that the signal does not reach cost it
-- nothing; `cpu_ratio` the same in CPU time).
-- Usage: signal_fanout.lua [N] [ROUNDS] [UNRELATED]   (default 10000 20 10000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local signal = cosock.signal

local W, IMPL = "signal_fanout", "cosock-native"
local N = B.argnum(1, 10000)
local ROUNDS = B.argnum(2, 20)
local UNRELATED = B.argnum(3, 10000)

-- One fan-out run beside `unrelated` tasks parked on "other"; returns its
-- wall and CPU seconds.
local function fanout(unrelated)
  local got = 0
  local st = {}
  for _ = 1, unrelated do cosock.spawn(function() signal.wait("other") end, "unrelated") end
  for _ = 1, N do
    cosock.spawn(function()
      for r = 1, ROUNDS do
        local ok, v = signal.wait("go")
        if not ok or v ~= r then error(("round %d: got %s"):format(r, tostring(v))) end
        got = got + 1
        if got == N * r then signal.one("round done") end
      end
    end, "waiter")
  end
  cosock.spawn(function()
    cosock.socket.sleep(0) -- every waiter is parked
    st.t0, st.c0 = B.now(), B.cpu()
    for r = 1, ROUNDS do
      local n = signal.all("go", r)
      if n ~= N then error(("round %d woke %d of %d"):format(r, n, N)) end
      assert(signal.wait("round done", 60))
    end
    st.t1, st.c1 = B.now(), B.cpu()
    if unrelated > 0 and signal.all("other") ~= unrelated then error("unrelated waiters lost") end
  end, "driver")
  cosock.run()
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
