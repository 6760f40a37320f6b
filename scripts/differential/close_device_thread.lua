-- The hub's device-thread loop (a thread library of the SmartThings hub): one
-- select over its event channel and its sockets; "closed" from receive ends
-- the inner loop, and the outer loop selects again. The thread is closed by
-- closing its channel's sender. On cosock that next select over the closed,
-- empty receiver parks for good, and run ends with the stall error once the
-- other tasks are done; a receiver reported ready again would make it spin.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

local tx, rx = cosock.channel.new()
local u = socket.udp()
u:setsockname("127.0.0.1", 0)
local _, port = u:getsockname()

R.task("device thread", function()
  for turn = 1, 4 do
    local ready, _, err = socket.select({ rx, u }, {}, nil)
    print("turn " .. turn .. ": " .. (ready and #ready or 0) .. " ready, " .. tostring(err))
    for _, r in ipairs(ready or {}) do
      if r == rx then
        R.show("  event", rx:receive())
      else
        R.show("  datagram", u:receive())
      end
    end
  end
  u:close()
  print("device thread: four turns")
end)

R.task("driver", function()
  tx:send("added")
  socket.sleep(0.05)
  local s = socket.udp()
  s:sendto("ping", "127.0.0.1", port)
  socket.sleep(0.05)
  tx:close()
  print("driver closed the thread's channel")
  socket.sleep(0.05)
  s:sendto("late", "127.0.0.1", port)
  s:close()
end)

R.run()
print("after run")
