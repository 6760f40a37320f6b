-- new_code.lua: cosock.profile("new"), the one call a program not written
-- for cosock makes first: a close() wakes the tasks waiting on the object and
-- a closed end is ready to select (as in copas and cqueues), and a socket's
-- timeouts mean what LuaSocket says. Code written for cosock 0.2.0 (a hub
-- driver) leaves it out: it depends on cosock's close, which wakes nobody.
--
-- Shows: an acceptor parked in accept() ends when another task closes the
-- listening socket; a consumer selecting on a channel and a 1-hour timer ends
-- when the producer closes the channel (without the profile both would wait
-- for ever: the acceptor, and the consumer until its timer).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh new_code
-- It prints:
--   profile before: cosock
--   consumer got 1
--   consumer got 2
--   consumer: the channel is closed
--   acceptor: accept returned nil closed
--   run() returned
local cosock = require "cosock"
print("profile before: " .. cosock.profile("new"))

local server = assert(cosock.socket.bind("127.0.0.1", 0))
local tx, rx = cosock.channel.new()

cosock.spawn(function()
  local c, err = server:accept()          -- parked until the close below
  print("acceptor: accept returned " .. tostring(c) .. " " .. tostring(err))
end, "acceptor")

cosock.spawn(function()
  while true do
    local ready = cosock.socket.select({ rx }, nil, 3600)   -- a message, or a close
    local msg = ready and rx:receive()
    if msg == nil then break end
    print("consumer got " .. msg)
  end
  print("consumer: the channel is closed")
  server:close()                          -- wakes the acceptor
end, "consumer")

cosock.spawn(function()
  tx:send(1)
  tx:send(2)
  tx:close()                              -- wakes the consumer
end, "producer")

cosock.run()
print("run() returned")
