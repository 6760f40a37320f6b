-- bounded_pipeline.lua: backpressure with bounded channels.
--
-- Shows: cosock.channel.new(capacity). A fast producer feeds a slow worker
-- through a channel of capacity 3: once 3 jobs are queued, the producer's
-- send waits until the worker takes one, so the producer never gets more than
-- 3 jobs ahead and nothing piles up in memory. The worker hands each result to
-- a printer through a rendezvous (capacity 0): its send returns only once the
-- printer has taken the result. A second producer uses sender:settimeout(0)
-- to drop jobs instead of waiting when the queue is full.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh bounded_pipeline
-- (or: lua5.3 examples/bounded_pipeline.lua with cosock on LUA_PATH/LUA_CPATH)
-- Prints one line per job as the producer queues it ("queue job N (3 queued,
-- waiting)" when it has to wait), the printer's "result N = N*N" lines in
-- between, then "producer was at most 3 jobs ahead, waited 7 times" and,
-- from the dropping producer, "dropped jobs 4 to 10: the queue was full".

local cosock = require "cosock"
local channel = cosock.channel
local socket = cosock.socket

local CAPACITY = 3
local jobs_tx, jobs_rx = channel.new(CAPACITY)
local results_tx, results_rx = channel.new(0) -- rendezvous
local ahead, waits = 0, 0

cosock.spawn(function()
  for n = 1, 10 do
    local queued = #jobs_tx.link.queue
    local full = queued == CAPACITY
    print(("queue job %d (%d queued%s)"):format(n, queued, full and ", waiting" or ""))
    if full then waits = waits + 1 end
    assert(jobs_tx:send(n)) -- waits while the queue is full
    if #jobs_tx.link.queue > ahead then ahead = #jobs_tx.link.queue end
  end
  jobs_tx:close() -- the worker still gets the queued jobs, then "closed"
end, "producer")

cosock.spawn(function()
  while true do
    local n = jobs_rx:receive()
    if n == nil then break end
    socket.sleep(0.01) -- slow work
    assert(results_tx:send(n * n)) -- returns once the printer took it
  end
  results_tx:close()
end, "worker")

cosock.spawn(function()
  local n = 0
  while true do
    local square = results_rx:receive()
    if square == nil then break end
    n = n + 1
    print(("result %d = %d"):format(n, square))
  end
  print(("producer was at most %d jobs ahead, waited %d times"):format(ahead, waits))
end, "printer")

cosock.run()

-- A producer that would rather drop work than wait.
local tx, rx = channel.new(CAPACITY)
tx:settimeout(0) -- a full queue fails at once with nil, "timeout"
local dropped = {}
for n = 1, 10 do
  local ok, err = tx:send(n)
  if not ok then dropped[#dropped + 1] = n; assert(err == "timeout") end
end
print(("dropped jobs %d to %d: the queue was full"):format(dropped[1], dropped[#dropped]))
assert(rx:receive() == 1 and #rx.link.queue == 2)
