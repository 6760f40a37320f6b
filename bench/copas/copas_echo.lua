-- copas echo: an unchanged copas program. copas.addserver with a
-- copas.handler echo server; CLIENTS copas threads connect (copas.wrap) and
-- each makes ROUNDS line round trips. bench/run runs it on copas 4.11
-- (COPAS_REF) and on cosock-native's copas API (lua/copas-compat first).
-- Usage: copas_echo.lua [CLIENTS] [ROUNDS]   (default 100 200)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local copas = require "copas"
local socket = require "socket"

local W = "copas_echo"
local IMPL = copas._VERSION:find("cosock") and "cosock-native" or "copas"
local CLIENTS = B.argnum(1, 100)
local ROUNDS = B.argnum(2, 200)

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 1024))
  local _, port = server:getsockname()
  local served, answered, done = 0, 0, 0
  copas.addserver(server, copas.handler(function(skt)
    while true do
      local line, err = skt:receive()
      if not line then
        if err ~= "closed" then error("server receive: " .. tostring(err)) end
        return
      end
      served = served + 1
      skt:send(line .. "\n")
    end
  end))
  for ci = 1, CLIENTS do
    copas.addthread(function()
      local c = copas.wrap(socket.tcp())
      assert(c:connect("127.0.0.1", port))
      for i = 1, ROUNDS do
        local req = ci .. " " .. i
        assert(c:send(req .. "\n"))
        local line, err = c:receive()
        if line ~= req then error("client got " .. tostring(line or err)) end
        answered = answered + 1
      end
      c:close()
      done = done + 1
      if done == CLIENTS then copas.removeserver(server) end
    end)
  end
  local t0, c0 = B.now(), B.cpu()
  copas.loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local want = CLIENTS * ROUNDS
  if served ~= want or answered ~= want then
    B.fail(W, IMPL, ("served=%d answered=%d want %d"):format(served, answered, want))
  end
  B.result(W, IMPL, {
    { "ops", want }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", want / wall },
  })
end)
