-- M1 parked memory, cosock (cosock-native or cosock 0.2.0 itself, whichever
-- LUA_PATH finds): N tasks, each parked in receive on a channel of its own,
-- the program keeping only the senders (as a driver keeps what it sends on).
-- Measured once every task is parked: RSS and Lua heap (after two full
-- collections) per task, over the same figures taken before the channels
-- were made. The tasks are then released (their senders closed) and must
-- all end with nil, "closed".
-- Usage: m1_parked.lua [N]   (default 100000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"

local IMPL = cosock._NATIVE_VERSION and "cosock-native" or "cosock"
local N = B.argnum(1, 100000)
local W = "m1_" .. N

B.guard(W, IMPL, function()
  local senders, ended = {}, 0
  local rss0, heap0 = B.rss_now(), B.heap_now()
  for i = 1, N do
    local tx, rx = cosock.channel.new()
    senders[i] = tx
    cosock.spawn(function()
      local msg, err = rx:receive()
      if msg == nil and err == "closed" then ended = ended + 1 end
    end, "parked")
  end
  local rss1, heap1
  cosock.spawn(function()
    cosock.socket.sleep(0) -- every other task has run once and parked
    rss1, heap1 = B.rss_now(), B.heap_now()
    for i = 1, N do senders[i]:close() end
  end, "measure")
  local t0 = B.now()
  cosock.run()
  if ended ~= N then B.fail(W, IMPL, ("%d of %d tasks ended with 'closed'"):format(ended, N)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", B.now() - t0 }, { "cpu", os.clock() }, { "rss_kb", B.rss_kb() },
    { "rss_per_task", (rss1 - rss0) / N }, { "heap_per_task", (heap1 - heap0) / N },
  })
end)
