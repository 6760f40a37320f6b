-- scope_sync, cosock: the costs of cosock.scope and cosock.sync.
--   scope: a scope of N tasks, each sleeping 0 once; `ns_per_task` is the
--   wall time of scope.run over N (spawn, run, end, join by the scope).
--   handoff: two tasks pass a lock back and forth ROUNDS times (each
--   acquires, yields, releases, so the other waits every time); `ns_lock` is
--   the wall time per hand-off; the same with a pair of channels (ping-pong)
--   gives `ns_channel`; `ratio` = ns_lock / ns_channel.
-- Usage: scope_sync.lua [N] [ROUNDS]   (default 10000 100000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"

local W, IMPL = "scope_sync", "cosock-native"
local N = B.argnum(1, 10000)
local ROUNDS = B.argnum(2, 100000)

local function timed(fn)
  local st = {}
  cosock.spawn(function()
    st.t0 = B.now()
    fn()
    st.t1 = B.now()
  end, "driver")
  cosock.run()
  return st.t1 - st.t0
end

B.guard(W, IMPL, function()
  local scope, sync = cosock.scope, cosock.sync
  local ended = 0
  local scope_wall = timed(function()
    local ok = scope.run(function(s)
      for _ = 1, N do
        s:spawn(function() cosock.socket.sleep(0); ended = ended + 1 end, "t")
      end
    end)
    if not ok or ended ~= N then B.fail(W, IMPL, "scope ended early") end
  end)
  -- Lock hand-off: A holds, B waits; A releases (B gets it) and asks again.
  local lock = sync.lock()
  local passes = 0
  local lock_wall = timed(function()
    local other = cosock.spawn(function()
      for _ = 1, ROUNDS do
        assert(lock:acquire())
        passes = passes + 1
        lock:release()
      end
    end, "b")
    for _ = 1, ROUNDS do
      assert(lock:acquire())
      passes = passes + 1
      lock:release()
    end
    other:join()
  end)
  if passes ~= 2 * ROUNDS then B.fail(W, IMPL, "lost hand-offs") end
  local atx, arx = cosock.channel.new()
  local btx, brx = cosock.channel.new()
  local chan_wall = timed(function()
    local other = cosock.spawn(function()
      for _ = 1, ROUNDS do btx:send(arx:receive()) end
    end, "b")
    for i = 1, ROUNDS do
      atx:send(i)
      brx:receive()
    end
    other:join()
  end)
  local ns_lock = lock_wall / (2 * ROUNDS) * 1e9
  local ns_chan = chan_wall / (2 * ROUNDS) * 1e9
  B.result(W, IMPL, {
    { "ops", N }, { "wall", scope_wall }, { "rss_kb", B.rss_kb() },
    { "ns_per_task", scope_wall / N * 1e9 },
    { "ns_lock", ns_lock }, { "ns_channel", ns_chan }, { "ratio", ns_lock / ns_chan },
  })
end)
