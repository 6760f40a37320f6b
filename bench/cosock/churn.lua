-- Churn, cosock: connections made and closed as fast as they go. CLIENTS
-- client tasks each make connections in turn until CONNS were made in all:
-- connect, one line request, one line reply, close. The server spawns a task
-- per accepted connection that reads the request, answers "ok <request>" and
-- closes (HTTP/1.0's shape).
-- Usage: churn.lua [CONNS] [CLIENTS]   (default 10000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local W, IMPL = "churn", "cosock-native"
local CONNS = B.argnum(1, 10000)
local CLIENTS = B.argnum(2, 100)

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 1024))
  local _, port = server:getsockname()
  port = tonumber(port)
  local served, answered, started = 0, 0, 0

  local function handle(c)
    local line, err = c:receive("*l")
    if line == nil then error("server receive: " .. tostring(err)) end
    assert(c:send("ok " .. line .. "\n"))
    served = served + 1
    c:close()
  end

  cosock.spawn(function()
    for _ = 1, CONNS do
      local c = assert(server:accept())
      cosock.spawn(function() handle(c) end, "handler")
    end
    server:close()
  end, "acceptor")

  for ci = 1, CLIENTS do
    cosock.spawn(function()
      while started < CONNS do
        started = started + 1
        local req = ci .. " " .. started
        local c = assert(socket.connect("127.0.0.1", port))
        assert(c:send(req .. "\n"))
        local line, err = c:receive("*l")
        if line ~= "ok " .. req then error("client got " .. tostring(line or err)) end
        answered = answered + 1
        c:close()
      end
    end, "client")
  end

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  B.exchange_done(W, IMPL, CONNS, served, answered, wall, cpu)
end)
