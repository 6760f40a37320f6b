-- step_host: a program that owns its loop (here a plain "frame" loop doing its
-- own work) and advances cosock one pass per frame with cosock.step, waiting
-- in step no longer than cosock.next_timeout() says. A task echoes lines over
-- loopback TCP meanwhile. Prints:
--   frame loop: the echo task answered "hello"
--   frame loop: done after the tasks ended: true
local cosock = require "cosock"
local socket = cosock.socket

local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
local answer

cosock.spawn(function()                          -- the echo server: one line
  local c = assert(server:accept())
  c:send(assert(c:receive("*l")) .. "\n")
  c:close()
  server:close()
end, "echo server")

cosock.spawn(function()                          -- its client
  local c = assert(socket.connect("127.0.0.1", port))
  c:send("hello\n")
  answer = c:receive("*l")
  c:close()
end, "echo client")

-- The host's own loop: a frame every 10 ms at most, cosock stepped in each.
local frames = 0
while true do
  frames = frames + 1                            -- (the host's own work goes here)
  local wait = cosock.next_timeout()             -- nil: no deadline, only fds
  if wait == nil or wait > 0.01 then wait = 0.01 end
  if not cosock.step(wait) then break end
  assert(frames < 10000, "the tasks never ended")
end
print(string.format('frame loop: the echo task answered "%s"', tostring(answer)))
print("frame loop: done after the tasks ended: " .. tostring(answer == "hello"))
