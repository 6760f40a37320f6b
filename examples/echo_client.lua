-- echo_client.lua: several concurrent TCP clients on cosock talking to an echo
-- server (examples/echo_server.lua).
--
-- Shows: cosock.socket.connect, many tasks sharing one loop, settimeout on a
-- wrapper, and checking what comes back.
--
-- Run from a checkout, after a build:
--       ./scripts/run-example.sh echo_server 0 3 &   (prints the port)
--       ./scripts/run-example.sh echo_client <port> 3
-- With no port, it starts its own echo server task on an ephemeral port first, so
-- `./scripts/run-example.sh echo_client` alone works too.
-- Prints, for each client, "client N: sent 3 lines, 3 echoed back", then "ok".

local cosock = require "cosock"
local socket = cosock.socket

local port = tonumber(arg[1])
local nclients = tonumber(arg[2]) or 3
local failures = 0

local function run_clients(p)
  for n = 1, nclients do
    cosock.spawn(function()
      local c = assert(socket.connect("127.0.0.1", p))
      c:settimeout(5)
      local echoed = 0
      for i = 1, 3 do
        local msg = string.format("hello %d from client %d", i, n)
        assert(c:send(msg .. "\n"))
        local back, err = c:receive()
        if back == msg then echoed = echoed + 1
        else print(string.format("client %d: got %s (%s)", n, tostring(back), tostring(err))) end
      end
      c:close()
      if echoed ~= 3 then failures = failures + 1 end
      print(string.format("client %d: sent 3 lines, %d echoed back", n, echoed))
    end, "client " .. n)
  end
end

if port then
  run_clients(port)
else
  -- no server given: run a small one here
  cosock.spawn(function()
    local server = assert(socket.bind("127.0.0.1", 0))
    local _, p = server:getsockname()
    run_clients(tonumber(p))
    for _ = 1, nclients do
      local c = assert(server:accept())
      c:settimeout(5)
      cosock.spawn(function()
        for line in function() return (c:receive()) end do c:send(line .. "\n") end
        c:close()
      end, "echo")
    end
    server:close()
  end, "local echo server")
end

cosock.run()
print(failures == 0 and "ok" or (failures .. " clients failed"))
os.exit(failures == 0 and 0 or 1)
