-- M1 parked memory, cqueues: N coroutines on one controller, each waiting on
-- a condition of its own (cqueues' way of parking on "a message may come"),
-- the program keeping the conditions. Figures as in bench/cosock/m1_parked.lua;
-- the tasks are then released (each condition signalled) and must all end.
-- Usage: m1_parked.lua [N]
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local condition = require "cqueues.condition"

local IMPL = "cqueues"
local N = B.argnum(1, 100000)
local W = "m1_" .. N

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local conds, ended = {}, 0
  local rss0, heap0 = B.rss_now(), B.heap_now()
  for i = 1, N do
    local c = condition.new()
    conds[i] = c
    cq:wrap(function() c:wait(); ended = ended + 1 end)
  end
  local rss1, heap1
  cq:wrap(function()
    cqueues.sleep(0)
    rss1, heap1 = B.rss_now(), B.heap_now()
    for i = 1, N do conds[i]:signal() end
  end)
  local t0 = B.now()
  assert(cq:loop())
  if ended ~= N then B.fail(W, IMPL, ("%d of %d tasks ended"):format(ended, N)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", B.now() - t0 }, { "cpu", os.clock() }, { "rss_kb", B.rss_kb() },
    { "rss_per_task", (rss1 - rss0) / N }, { "heap_per_task", (heap1 - heap0) / N },
  })
end)
