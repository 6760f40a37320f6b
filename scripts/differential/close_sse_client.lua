-- The shape of the Hue/JBL EventSource client (lunchbox/sse/eventsource.lua in
-- SmartThingsEdgeDrivers): a task reads lines with receive("*l") in a loop,
-- taking "timeout" as "nothing yet"; close() clears the socket field and
-- closes the socket while that task waits. On cosock the task's receive ends
-- at its timeout and the loop sees the source closed and ends; a receive woken
-- at once with "closed" would make the task index the nil field.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

local source = { state = "open" }

local function open_action(src)
  local recv, err, partial = src.sock:receive("*l")
  if err then
    if err == "timeout" or err == "wantread" then return end
    src.sock:close()                    -- a real error: close the connection
    src.sock = nil
    src.state = "closed"
    return nil, err, partial
  end
  print("event: " .. recv)
end

function source:close()
  if self.sock ~= nil then self.sock:close() end
  self.sock = nil
  self.state = "closed"
end

local srv, port = R.listen()
R.task("server", function()
  local c = srv:accept()
  c:send("data: one\n")
  socket.sleep(0.3)
  c:close()
  srv:close()
end)

R.task("client", function()
  local s = socket.tcp()
  s:settimeout(0.1)
  assert(s:connect("127.0.0.1", port))
  source.sock = s
  local turns = 0
  while source.state ~= "closed" do
    turns = turns + 1
    local _, err = open_action(source)
    if err then print("action error: " .. err) end
  end
  print("client loop ended after a turn: " .. tostring(turns >= 2))
end)

R.task("closer", function()
  socket.sleep(0.15)
  source:close()
  print("closed the source")
end)

R.run()
