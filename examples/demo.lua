-- demo: one server and several clients, all tasks of one cosock-native loop.
--
-- A server task listens on a loopback port and spawns one task per client;
-- each handler answers every line with the line in upper case. Five client
-- tasks connect at the same time, send three lines each with short pauses,
-- and check every answer; a channel carries their reports to a collector task
-- that prints the summary. Nothing blocks: while one task waits on a socket
-- or a sleep, the others run.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh demo
-- (./scripts/demo.sh installs what is missing, builds, then runs this.)
local cosock = require "cosock"
local socket = cosock.socket

local CLIENTS, LINES = 5, 3

local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
print(string.format("server listening on 127.0.0.1:%d", port))

local reports_tx, reports_rx = cosock.channel.new()

cosock.spawn(function()
  for _ = 1, CLIENTS do
    local conn = assert(server:accept())
    cosock.spawn(function()
      conn:settimeout(5)
      while true do
        local line, err = conn:receive("*l")
        if not line then
          assert(err == "closed", err)
          break
        end
        assert(conn:send(line:upper() .. "\n"))
      end
      conn:close()
    end, "handler")
  end
  server:close()
end, "server")

for id = 1, CLIENTS do
  cosock.spawn(function()
    local conn = assert(socket.connect("127.0.0.1", port))
    conn:settimeout(5)
    local ok = 0
    for n = 1, LINES do
      local line = string.format("hello %d from client %d", n, id)
      assert(conn:send(line .. "\n"))
      local answer = assert(conn:receive("*l"))
      if answer == line:upper() then ok = ok + 1 end
      print(string.format("client %d got %q", id, answer))
      socket.sleep(0.01 * id) -- the others keep going meanwhile
    end
    conn:close()
    reports_tx:send({ id = id, ok = ok })
  end, "client " .. id)
end

cosock.spawn(function()
  local total = 0
  for _ = 1, CLIENTS do
    local report = assert(reports_rx:receive())
    total = total + report.ok
  end
  print(string.format("%d clients, %d of %d answers correct", CLIENTS, total, CLIENTS * LINES))
end, "collector")

cosock.run()
print("all tasks finished; run() returned")
