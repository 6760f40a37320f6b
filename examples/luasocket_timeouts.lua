-- luasocket_timeouts.lua: a socket wrapper's timeouts as cosock 0.2.0 reads
-- them (the default) and as LuaSocket does (cosock.set_luasocket_timeouts).
--
-- Shows: a reader polling with settimeout(0) while a ticker task counts
-- (off: each failed receive yields once, so the ticker runs between polls;
-- on: the receive fails at once and the ticker waits for the reader's next
-- real wait); settimeout(1, "t") on a line that trickles in, two bytes every
-- 0.3 s, 1.2 s in all (off: 1 s limits each wait, the line arrives whole; on:
-- 1 s limits the whole call, which times out with the part that came).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh luasocket_timeouts
-- It prints:
--   off: 3 polls with settimeout(0), ticker ran 3 times in between
--   off: settimeout(1, "t"): "abcdefghij"
--   set_luasocket_timeouts(true) returned false
--   on: 3 polls with settimeout(0), ticker ran 0 times in between
--   on: settimeout(1, "t"): nil timeout, with the start of the line
--   run() returned
local cosock = require "cosock"
local socket = cosock.socket

local function pair()
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local client = assert(socket.connect("127.0.0.1", port))
  local peer = assert(server:accept())
  server:close()
  return client, peer
end

local function round(label)
  local client, peer = pair()
  -- Polling: three receives that find nothing, with a ticker ready to run.
  local ticks = 0
  local stop = false
  local ticker = cosock.spawn(function()
    while not stop do ticks = ticks + 1; socket.sleep(0) end
  end, "ticker")
  client:settimeout(0)
  socket.sleep(0)                          -- the ticker's first turn
  local before = ticks
  for _ = 1, 3 do client:receive() end
  print(label .. ": 3 polls with settimeout(0), ticker ran " .. (ticks - before) .. " times in between")
  stop = true
  socket.sleep(0)
  assert(not ticker:is_alive())

  -- A line that arrives two bytes every 0.3 s.
  cosock.spawn(function()
    for _, piece in ipairs({ "ab", "cd", "ef", "gh", "ij\n" }) do
      peer:send(piece)
      socket.sleep(0.3)
    end
  end, "trickler")
  client:settimeout(nil)                   -- (the block timeout of the polls goes)
  client:settimeout(1, "t")
  local line, err, partial = client:receive()
  if line then
    print(label .. ': settimeout(1, "t"): "' .. line .. '"')
  else
    local start = ("abcdefghij"):sub(1, #partial) == partial and "the start of the line" or partial
    print(label .. ': settimeout(1, "t"): nil ' .. err .. ", with " .. start)
  end
  socket.sleep(1.5)                        -- the trickler ends
  client:close()
  peer:close()
end

cosock.spawn(function()
  round("off")
  print("set_luasocket_timeouts(true) returned " .. tostring(cosock.set_luasocket_timeouts(true)))
  round("on")
  cosock.set_luasocket_timeouts(false)
end, "main")

cosock.run()
print("run() returned")
