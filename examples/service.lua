-- service: a line-echo service that stops cleanly. SIGTERM (or SIGINT)
-- drains it: the acceptor is stopped and the listener closed, each
-- connection finishes the request it is serving and is closed, and after at
-- most DRAIN seconds whatever is left is cancelled with cosock.stop(), so run
-- returns. SIGHUP "reloads" (here it only says so). A request "slow" is
-- answered after 0.2 s (an in-flight request for a drain to wait for).
-- Under the default settings (cosock's: a close wakes no task), closing the
-- listener does not end a task parked in accept(): the drain cancels the
-- acceptor first. doc/service.md walks through it.
-- Usage: lua service.lua [PORT]   (default 0: any; the port is printed)
-- Prints "listening <port>", "reload" per SIGHUP, then "draining <n>",
-- "acceptor ended: true" and "stopped: <n> drained, <m> cancelled".
local cosock = require "cosock"
local socket = cosock.socket

local DRAIN = 5                                  -- seconds a drain may take
io.stdout:setvbuf("line")

local server = assert(socket.bind("127.0.0.1", tonumber(arg and arg[1]) or 0))
local conns, draining = {}, false                -- handle -> its socket

local function serve(c)
  c:settimeout(0.1)                              -- (to look at `draining` while idle)
  while true do
    local line, err = c:receive("*l")
    if line == "slow" then socket.sleep(0.2) end
    if line then c:send(line .. "\n")
    elseif err ~= "timeout" or draining then break end
  end
  c:close()
end

local acceptor = cosock.spawn(function()         -- the acceptor
  while true do
    local c = server:accept()                    -- (parked here until the drain cancels it)
    if c then
      local h
      h = cosock.spawn(function() serve(c); conns[h] = nil end, "connection")
      conns[h] = c
    end
  end
end, "acceptor")

cosock.spawn(function()                          -- the signals
  local rx = cosock.ossignal.receiver("TERM", "INT", "HUP")
  local _, port = server:getsockname()
  print("listening " .. port)
  while rx:receive() == "HUP" do print("reload") end
  rx:close()                                     -- a second TERM ends the process at once
  local n = 0
  for _ in pairs(conns) do n = n + 1 end
  print("draining " .. n)
  draining = true
  acceptor:cancel()                              -- stop taking work: its accept is withdrawn
  server:close()                                 -- (a close alone wakes nobody, as in cosock)
  print("acceptor ended: " .. tostring(not acceptor:is_alive()))
  local deadline, drained = cosock.timer.now() + DRAIN, 0
  for h in pairs(conns) do
    if h:join(math.max(0, deadline - cosock.timer.now())) then drained = drained + 1 end
  end
  local left = 0
  for _ in pairs(conns) do left = left + 1 end
  cosock.stop()                                  -- what the deadline left behind
  print(string.format("stopped: %d drained, %d cancelled", drained, left))
end, "signals")

cosock.run()
