-- copas_echo.lua: a copas program (copas 4.11's API) on cosock-native, with
-- a cosock task beside it on the same loop (doc/copas.md). Run:
--   LUA_PATH='lua/?.lua;;' LUA_CPATH='build/src/cpath/?.so;;' lua5.3 examples/copas_echo.lua
-- An unchanged copas program gets the same with
--   lua5.3 -e 'require("cosock.copas").install()' program.lua
local copas = require("cosock.copas").install() -- from now on require "copas" is this
local cosock = require "cosock"
local socket = require "socket"

local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
local log_tx, log_rx = cosock.channel.new()

-- copas: an echo server; each line also goes to a cosock task over a channel
copas.addserver(server, copas.handler(function(skt)
  while true do
    local line = skt:receive()
    if not line then return end
    log_tx:send(line)
    skt:send(line .. "\n")
  end
end))

-- cosock: a task that prints what the server saw
cosock.spawn(function()
  for _ = 1, 3 do print("server saw: " .. log_rx:receive()) end
end, "logger")

-- copas: a client thread
copas.addthread(function()
  local skt = copas.wrap(socket.tcp())
  assert(skt:connect("127.0.0.1", port))
  for _, word in ipairs({ "one", "two", "three" }) do
    skt:send(word .. "\n")
    print("echoed: " .. skt:receive())
  end
  skt:close()
  copas.removeserver(server)
end)

copas.loop() -- runs the copas threads and the cosock task; returns when all are done
print("done")
