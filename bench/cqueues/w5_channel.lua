-- W5 channel, cqueues: N messages (the integers 1..N) from one producer
-- coroutine to one consumer coroutine over an unbounded channel (a queue
-- plus a cqueues condition variable, lib/cq_channel.lua).
--   paced: the producer yields for one loop step (cqueues.sleep(0)) after
--          every BATCH messages;
--   burst: the producer sends all N without ever yielding, then closes.
--   CAP:   the channel's capacity (lib/cq_channel.lua: a second condition
--          for "not full"; 0: the send waits until its message was taken);
--          none or "-": unbounded.
-- Usage: w5_channel.lua [paced|burst] [N] [BATCH] [CAP]   (default paced 200000 100 -)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local channel = require "cq_channel"

local IMPL = "cqueues"
local MODE = arg[1] or "paced"
local N = B.argnum(2, 200000)
local BATCH = B.argnum(3, 100)
local CAP = B.argnum(4, nil)
local W = (MODE == "burst") and "w5burst" or "w5"
if N ~= 200000 then W = W .. "_" .. N end
if CAP then W = W .. "_cap" .. CAP end

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local ch = channel.new(CAP)
  local got, bad = 0, nil

  cq:wrap(function()
    while true do
      local msg, err = ch:receive()
      if msg == nil then
        if err ~= "closed" then bad = "receive error " .. tostring(err) end
        break
      end
      got = got + 1
      if msg ~= got and not bad then bad = ("message %d is %s"):format(got, tostring(msg)) end
    end
  end)

  cq:wrap(function()
    if MODE == "burst" then
      for i = 1, N do ch:send(i) end
    else
      local sleep = cqueues.sleep
      for i = 1, N do
        ch:send(i)
        if i % BATCH == 0 then sleep(0) end
      end
    end
    ch:close()
  end)

  local t0, c0 = B.now(), B.cpu()
  local ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
  if bad then B.fail(W, IMPL, bad) end
  if got ~= N then B.fail(W, IMPL, ("received %d messages, want %d"):format(got, N)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", N / wall }, { "ns_per_msg", wall / N * 1e9 },
  })
end)
