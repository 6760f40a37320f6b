-- W5 channel, cosock: N messages (the integers 1..N) from one producer task
-- to one consumer task over a cosock channel.
--   paced: the producer gives up the processor for one pass (sleep(0))
--          after every BATCH messages;
--   burst: the producer sends all N without ever yielding, then closes.
--   CAP:   the channel's capacity (cosock.channel.new(CAP)); none or "-":
--          cosock's unbounded channel. A bounded producer also waits
--          whenever the channel is full; 0 is a rendezvous.
-- Usage: w5_channel.lua [paced|burst] [N] [BATCH] [CAP]   (default paced 200000 100 -)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"

local IMPL = "cosock-native"
local MODE = arg[1] or "paced"
local N = B.argnum(2, 200000)
local BATCH = B.argnum(3, 100)
local CAP = B.argnum(4, nil)
local W = (MODE == "burst") and "w5burst" or "w5"
if N ~= 200000 then W = W .. "_" .. N end
if CAP then W = W .. "_cap" .. CAP end

B.guard(W, IMPL, function()
  local tx, rx = cosock.channel.new(CAP)
  local got, bad = 0, nil

  cosock.spawn(function()
    while true do
      local msg, err = rx:receive()
      if msg == nil then
        if err ~= "closed" then bad = "receive error " .. tostring(err) end
        break
      end
      got = got + 1
      if msg ~= got and not bad then bad = ("message %d is %s"):format(got, tostring(msg)) end
    end
  end, "consumer")

  cosock.spawn(function()
    if MODE == "burst" then
      for i = 1, N do tx:send(i) end
    else
      local sleep = cosock.socket.sleep
      for i = 1, N do
        tx:send(i)
        if i % BATCH == 0 then sleep(0) end
      end
    end
    tx:close()
  end, "producer")

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if bad then B.fail(W, IMPL, bad) end
  if got ~= N then B.fail(W, IMPL, ("received %d messages, want %d"):format(got, N)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", N / wall }, { "ns_per_msg", wall / N * 1e9 },
  })
end)
