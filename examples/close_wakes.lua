-- close_wakes.lua: what close() does to a task waiting on the object, with
-- cosock.set_close_wakes off (the default: cosock 0.2.0's close) and on.
--
-- Shows: a reader blocked in receive on a socket that another task closes
-- (off: it waits for its timeout; on: woken at once with "closed"); a select
-- over a closed, empty channel receiver (off: not ready, the select's timeout
-- ends it; on: ready at once); receive on a closed receiver ("closed" at once
-- either way); set_close_wakes returning the previous setting.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh close_wakes
-- It prints:
--   close_wakes off: reader got nil timeout
--   close_wakes off: select over a closed receiver: timeout
--   close_wakes off: receive: nil closed
--   set_close_wakes(true) returned false
--   close_wakes on: reader got nil closed
--   close_wakes on: select over a closed receiver: ready
--   close_wakes on: receive: nil closed
--   run() returned
local cosock = require "cosock"
local socket = cosock.socket

-- One round: a connected pair, a reader waiting (at most 0.2 s) for a line
-- that never comes, and a close of its socket from another task.
local function round(label)
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local client = assert(socket.connect("127.0.0.1", port))
  local peer = assert(server:accept())
  server:close()
  local done_tx, done_rx = cosock.channel.new()
  cosock.spawn(function()
    client:settimeout(0.2)
    local line, err = client:receive("*l")
    print(label .. ": reader got " .. tostring(line) .. " " .. tostring(err))
    done_tx:send(true)
  end, "reader")
  socket.sleep(0.02)
  client:close()                              -- the reader is blocked in receive
  done_rx:receive()
  peer:close()

  local tx, rx = cosock.channel.new()
  tx:close()
  local ready, _, err = socket.select({ rx }, nil, 0.05)
  print(label .. ": select over a closed receiver: " .. (ready and "ready" or err))
  print(label .. ": receive: " .. table.concat({ tostring((rx:receive())), select(2, rx:receive()) }, " "))
end

cosock.spawn(function()
  round("close_wakes off")
  print("set_close_wakes(true) returned " .. tostring(cosock.set_close_wakes(true)))
  round("close_wakes on")
  cosock.set_close_wakes(false)
end, "main")

cosock.run()
print("run() returned")
