-- pipeline.lua: three tasks connected by cosock channels.
--
-- Shows: cosock.channel.new, a producer that closes its channel when done, a
-- stage that transforms messages, a consumer that reads until "closed", and
-- cosock.socket.select waiting on a channel and a timer at the same time.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh pipeline
-- Prints the squares of 1..10 as "1 4 9 ... 100", a line "tick" for each time the
-- consumer's select timed out while waiting, and "sum = 385".

local cosock = require "cosock"
local socket = cosock.socket
local channel = cosock.channel

local numbers_tx, numbers_rx = channel.new()
local squares_tx, squares_rx = channel.new()

cosock.spawn(function()
  for i = 1, 10 do
    numbers_tx:send(i)
    if i % 4 == 0 then socket.sleep(0.05) end -- pause now and then
  end
  numbers_tx:close()
end, "producer")

cosock.spawn(function()
  while true do
    local n, err = numbers_rx:receive()
    if n == nil then break end -- err == "closed"
    squares_tx:send(n * n)
  end
  squares_tx:close()
end, "squarer")

cosock.spawn(function()
  local got, sum = {}, 0
  while true do
    -- wait for the channel, but wake up every 20 ms to show that select also times out
    local ready = socket.select({ squares_rx }, nil, 0.02)
    if ready then
      local sq, err = squares_rx:receive()
      if sq == nil then break end
      got[#got + 1] = sq
      sum = sum + sq
    else
      print("tick")
    end
  end
  print(table.concat(got, " "))
  print("sum = " .. sum)
end, "consumer")

cosock.run()
