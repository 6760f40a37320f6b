-- W1's LuaSocket work with no runtime: one loopback connection, "ping\n" /
-- "pong\n" with receive("*l"), made in the order the exchange runs (client
-- sends, server reads and answers, client reads); the data is always there
-- already, so nothing waits and nothing is polled. The floor that a runtime
-- driving LuaSocket's objects from Lua can approach, never pass.
-- Usage: LUA_PATH/LUA_CPATH as for the bench; lua5.3 w1_plain.lua [ROUNDS] [coroutines]
--   coroutines: a coroutine per end resumed by hand (adds the switches).
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local socket = require "socket"

local ROUNDS = B.argnum(1, 20000)
local CO = arg[2] == "coroutines"
local W, IMPL = "w1floor", CO and "lua-coroutines" or "lua-plain"

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local cl = assert(socket.connect("127.0.0.1", tonumber(port)))
  local sv = assert(server:accept())
  local served, answered = 0, 0
  local function serve()
    local line = sv:receive("*l")
    if line ~= "ping" then error("server got " .. tostring(line)) end
    served = served + 1
    assert(sv:send("pong\n"))
  end
  local function check(line)
    if line ~= "pong" then error("client got " .. tostring(line)) end
    answered = answered + 1
  end
  local t0, c0 = B.now(), B.cpu()
  if not CO then
    for _ = 1, ROUNDS do
      assert(cl:send("ping\n"))
      serve()
      check(cl:receive("*l"))
    end
  else
    local yield = coroutine.yield
    local server_co = coroutine.wrap(function() while true do yield(); serve() end end)
    local client_co = coroutine.wrap(function()
      for _ = 1, ROUNDS do
        assert(cl:send("ping\n"))
        yield()
        check(cl:receive("*l"))
      end
    end)
    server_co()
    for _ = 1, ROUNDS do client_co(); server_co() end
    client_co()
  end
  local wall, cpu = B.now() - t0, B.cpu() - c0
  cl:close(); sv:close(); server:close()
  B.exchange_done(W, IMPL, ROUNDS, served, answered, wall, cpu)
end)
