-- M1 parked memory, the floor: what any runtime must hold for a task parked
-- on a channel receive, with no runtime at all. N coroutines, each resumed
-- once and suspended inside cosock-native's channel receive (outside a
-- task, a receive yields its wait tuple), the program keeping the senders
-- and the coroutines. Figures as in bench/cosock/m1_parked.lua.
-- Usage: m1_parked.lua [N]   (needs cosock-native's lua/ on LUA_PATH)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local channel = require "cosock.channel"

local IMPL = "floor"
local N = B.argnum(1, 100000)
local W = "m1_" .. N

B.guard(W, IMPL, function()
  local keep = {}
  local rss0, heap0 = B.rss_now(), B.heap_now()
  for i = 1, N do
    local tx, rx = channel.new()
    local co = coroutine.create(function() return rx:receive() end)
    assert(coroutine.resume(co))
    keep[i] = { tx, co }
  end
  local rss1, heap1 = B.rss_now(), B.heap_now()
  for i = 1, N do
    if coroutine.status(keep[i][2]) ~= "suspended" then B.fail(W, IMPL, "a coroutine did not park") end
  end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", 0 }, { "cpu", os.clock() }, { "rss_kb", B.rss_kb() },
    { "rss_per_task", (rss1 - rss0) / N }, { "heap_per_task", (heap1 - heap0) / N },
  })
end)
