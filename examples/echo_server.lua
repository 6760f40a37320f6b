-- echo_server.lua: a TCP echo server on cosock, one task per connection.
--
-- Shows: cosock.socket.bind, accept in a loop, spawning a task per client, line
-- receive/send that wait by yielding, and a server that stops after serving a set
-- number of clients so that cosock.run() returns.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh echo_server [port] [clients]
-- (or: lua5.3 examples/echo_server.lua with cosock on LUA_PATH/LUA_CPATH)
-- Prints "listening on 127.0.0.1:<port>", then one line per client served, then
-- "served N clients". With port 0 (the default) the system picks a free port; talk
-- to it with examples/echo_client.lua <port>.

local cosock = require "cosock"
local socket = cosock.socket

local port = tonumber(arg[1]) or 0
local clients = tonumber(arg[2]) or 1

local served = 0

cosock.spawn(function()
  local server = assert(socket.bind("127.0.0.1", port))
  local ip, real_port = server:getsockname()
  print(string.format("listening on %s:%s", ip, real_port))
  io.stdout:flush()
  for n = 1, clients do
    local client = assert(server:accept())
    client:settimeout(30) -- an idle client is dropped after 30 s
    cosock.spawn(function()
      local lines = 0
      while true do
        local line, err = client:receive()
        if not line then
          if err ~= "closed" then print("client " .. n .. ": " .. err) end
          break
        end
        lines = lines + 1
        client:send(line .. "\n")
      end
      client:close()
      served = served + 1
      print(string.format("client %d done after %d lines", n, lines))
    end, "echo client " .. n)
  end
  server:close()
end, "echo server")

cosock.run()
print("served " .. served .. " clients")
