-- device_thread: a loop in the shape of the hub's device thread (its library is
-- not public): it selects over its event channel and a udp socket, handles each
-- ready one, and on the channel's "closed" leaves its inner loop and selects
-- again. The driver task sends two events, closes the channel (as a driver's
-- thread:close() does), then counts how often the loop selected in the next
-- half second, sets a stop flag and wakes the loop with a datagram.
-- needs: nothing (cosock only)
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
local cosock = require "cosock"
local socket = cosock.socket

local tx, rx = cosock.channel.new()
local sock = assert(socket.udp())
assert(sock:setsockname("127.0.0.1", 0))
local _, port = sock:getsockname()
local selects, closes, stop = 0, 0, false

-- Counts that cosock keeps small print as numbers; a loop that spins prints
-- a fixed phrase instead of a count that changes from run to run.
local function count(n)
  return n > 10 and "more than 10 (the loop spins)" or tostring(n)
end

H.task("device thread", function()
  while not stop do
    local ready, _, err = socket.select({ rx, sock }, {})
    selects = selects + 1
    if err then H.say("thread: select error", err) end
    for _, r in ipairs(ready or {}) do
      if r == rx then
        local msg, rerr = rx:receive()
        if rerr == "closed" then
          closes = closes + 1
          if closes == 1 then H.say("thread: event channel closed") end
          break
        end
        H.say("thread: event", msg, rerr)
      elseif r == sock then
        H.say("thread: datagram", sock:receive())
      end
    end
  end
  H.say("thread: loop left; selects", count(selects), "closed seen", count(closes))
  sock:close()
end)

H.task("driver", function()
  tx:send("added")
  tx:send("info_changed")
  socket.sleep(0.1)
  tx:close()
  local before = selects
  socket.sleep(0.5)
  local n = selects - before
  H.say("driver: selects in the 0.5 s after close", count(n))
  stop = true
  local w = assert(socket.udp())
  assert(w:sendto("wake", "127.0.0.1", port))
  w:close()
end)
H.run()
