-- sonos_bus: the Sonos driver's broadcast bus (drivers/SmartThings/sonos/src/
-- cosock/bus.lua, unchanged): a table with its own setwaker, waited on through
-- coroutine.yield and select. Two subscribers (one with a timeout, one in a
-- select next to a channel) get three messages, one times out, one
-- unsubscribes, then the sender closes the bus while a subscriber waits.
-- Each task keeps its own lines, printed after run: which subscriber cosock
-- resumes first after a send follows pairs() and varies from run to run.
-- needs: edge
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
-- Only the bus module from the driver's folder: require "cosock.bus" would
-- find cosock's own modules first, so the file is loaded by its path.
local root = H.use("edge")
local Bus = dofile(root .. "/drivers/SmartThings/sonos/src/cosock/bus.lua")
local cosock = require "cosock"
local socket = cosock.socket

local tx = Bus()
local a, b = tx:subscribe(), tx:subscribe()
local ctl_tx, ctl_rx = cosock.channel.new()
a:settimeout(0.3)

local lines = { a = {}, b = {}, sender = {} }
local function say(who, ...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  table.insert(lines[who], table.concat(t, "\t", 1, t.n))
end

H.task("subscriber a", function()
  while true do
    local msg, err = a:receive()
    say("a", "receive", msg, err)
    if err == "closed" then break end
    if err == "timeout" then a:settimeout(nil) end
  end
end)

H.task("subscriber b", function()
  for _ = 1, 6 do
    local ready, _, err = socket.select({ b, ctl_rx }, nil, 2)
    if err then say("b", "select", err) break end
    if ready[1] == ctl_rx or ready[2] == ctl_rx then
      say("b", "control", ctl_rx:receive())
      b:close()
      say("b", "closed its subscription; receive", b:receive())
      break
    end
    say("b", "receive", b:receive())
  end
end)

H.task("sender", function()
  for i = 1, 3 do
    say("sender", "send", i, tx:send("msg" .. i))
    socket.sleep(0.1)
  end
  socket.sleep(0.6) -- a's 0.3 s timeout runs out in here
  ctl_tx:send("unsubscribe")
  socket.sleep(0.1)
  say("sender", "send after b left", tx:send("msg4"))
  socket.sleep(0.1)
  tx:close()
  say("sender", "closed; send", tx:send("msg5"), "subscribe", tx:subscribe())
end)
H.run()
for _, who in ipairs({ "sender", "a", "b" }) do
  for _, l in ipairs(lines[who]) do H.say(who .. ": " .. l) end
end
