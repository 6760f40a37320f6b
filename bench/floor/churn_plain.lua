-- Churn's LuaSocket work with no runtime: CONNS connections made in batches
-- of CLIENTS, in the order a pass-based loop runs them (every client
-- connects, the server accepts each, every client sends its request, every
-- server end reads it, answers and closes, every client reads the reply and
-- closes); the data is always there already, so nothing waits and nothing is
-- polled. The floor for the churn row: LuaSocket's objects and the kernel's
-- connection setup and teardown, with no runtime at all.
-- Usage: LUA_PATH/LUA_CPATH as for the bench; lua5.3 churn_plain.lua [CONNS] [CLIENTS]
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local socket = require "socket"

local CONNS, CLIENTS = B.argnum(1, 10000), B.argnum(2, 100)
local W, IMPL = "churnfloor", "lua-plain"

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 1024))
  local _, port = server:getsockname()
  port = tonumber(port)
  local served, answered, made = 0, 0, 0
  local cl, sv, reqs = {}, {}, {}
  local t0, c0 = B.now(), B.cpu()
  while made < CONNS do
    local n = math.min(CLIENTS, CONNS - made)
    for ci = 1, n do
      made = made + 1
      reqs[ci] = ci .. " " .. made
      cl[ci] = assert(socket.connect("127.0.0.1", port))
      sv[ci] = assert(server:accept())
    end
    for ci = 1, n do assert(cl[ci]:send(reqs[ci] .. "\n")) end
    for ci = 1, n do
      local line = assert(sv[ci]:receive("*l"))
      assert(sv[ci]:send("ok " .. line .. "\n"))
      served = served + 1
      sv[ci]:close()
    end
    for ci = 1, n do
      local line, err = cl[ci]:receive("*l")
      if line ~= "ok " .. reqs[ci] then error("client got " .. tostring(line or err)) end
      answered = answered + 1
      cl[ci]:close()
    end
  end
  local wall, cpu = B.now() - t0, B.cpu() - c0
  server:close()
  B.exchange_done(W, IMPL, CONNS, served, answered, wall, cpu)
end)
