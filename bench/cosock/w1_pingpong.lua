-- W1 ping-pong, cosock: a server task and a client task on one loopback TCP
-- connection exchanging "ping\n" / "pong\n" with receive("*l").
-- Usage: w1_pingpong.lua [ROUNDS]   (default 20000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local W, IMPL = "w1", "cosock-native"
local ROUNDS = B.argnum(1, 20000)

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local served, answered, t_first, t_last = 0, 0, nil, nil

  cosock.spawn(function()
    local c = assert(server:accept())
    while true do
      local line, err = c:receive("*l")
      if line == nil then
        if err ~= "closed" then error("server receive: " .. tostring(err)) end
        break
      end
      if line ~= "ping" then error("server got " .. tostring(line)) end
      served = served + 1
      assert(c:send("pong\n"))
    end
    c:close()
    server:close()
  end, "server")

  cosock.spawn(function()
    local c = assert(socket.connect("127.0.0.1", tonumber(port)))
    t_first = B.now()
    for _ = 1, ROUNDS do
      assert(c:send("ping\n"))
      local line, err = c:receive("*l")
      if line ~= "pong" then error("client got " .. tostring(line or err)) end
      answered = answered + 1
    end
    t_last = B.now()
    c:close()
  end, "client")

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if served ~= ROUNDS or answered ~= ROUNDS then
    B.fail(W, IMPL, ("served=%d answered=%d want %d"):format(served, answered, ROUNDS))
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", ROUNDS / (t_last - t_first) },
  })
end)
