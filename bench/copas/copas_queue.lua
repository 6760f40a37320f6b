-- copas queue pipeline: an unchanged copas program. ITEMS items go through
-- STAGES copas.queue's, each with WORKERS workers (copas threads) that pop
-- from their queue and push to the next; the last stage counts and sums.
-- bench/run runs it on copas 4.11 (COPAS_REF) and on cosock-native's copas
-- API (lua/copas-compat first on LUA_PATH).
-- Usage: copas_queue.lua [ITEMS] [STAGES] [WORKERS]   (default 100000 4 2)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local copas = require "copas"

local W = "copas_queue"
local IMPL = copas._VERSION:find("cosock") and "cosock-native" or "copas"
local ITEMS = B.argnum(1, 100000)
local STAGES = B.argnum(2, 4)
local WORKERS = B.argnum(3, 2)

B.guard(W, IMPL, function()
  local queues = {}
  for i = 1, STAGES do queues[i] = copas.queue.new({ name = "stage" .. i }) end
  local count, sum = 0, 0
  for i = 1, STAGES do
    local nxt = queues[i + 1]
    for _ = 1, WORKERS do
      queues[i]:add_worker(function(item)
        if nxt then
          nxt:push(item + 1)
        else
          count = count + 1
          sum = sum + item
        end
      end)
    end
  end
  copas.addthread(function()
    local q = queues[1]
    for i = 1, ITEMS do
      q:push(i)
      if i % 100 == 0 then copas.pause() end
    end
    for i = 1, STAGES do assert(queues[i]:finish(600)) end
  end)
  local t0, c0 = B.now(), B.cpu()
  copas.loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local want_sum = ITEMS * (ITEMS + 1) / 2 + ITEMS * (STAGES - 1)
  if count ~= ITEMS or sum ~= want_sum then
    B.fail(W, IMPL, ("count=%d sum=%s want %d %s"):format(count, tostring(sum), ITEMS, tostring(want_sum)))
  end
  B.result(W, IMPL, {
    { "ops", ITEMS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", ITEMS / wall },
  })
end)
