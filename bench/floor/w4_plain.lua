-- W4's requests with no runtime at all: what LuaSocket and the Lua VM cost
-- by themselves. 100 connections, 100 requests each ("<client> <i>" answered
-- by "ok <client> <i>"), made in the order a pass-based loop runs them (every
-- client sends, every server answers, every client reads); the data is always
-- there already, so nothing waits and nothing is polled.
-- Usage: LUA_PATH/LUA_CPATH as for the bench; lua5.3 w4_plain.lua [REQS] [coroutines|plain] [CLIENTS]
--   coroutines: one coroutine per connection end, resumed by hand in that order
--   (adds what switching coroutines costs, still with no runtime).
--   CLIENTS: default 100; W6's floor is `w4_plain.lua 10 plain 1500` (needs
--   `ulimit -n 4096`).
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local socket = require "socket"

local CLIENTS, REQS = B.argnum(3, 100), B.argnum(1, 100)
local CO = arg[2] == "coroutines"
local W, IMPL = "w4floor", CO and "lua-coroutines" or "lua-plain"

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 1024))
  local _, port = server:getsockname()
  -- Timed like the W4 programs: connecting, accepting and closing count too.
  local t0, c0 = B.now(), B.cpu()
  local cl, sv = {}, {}
  for ci = 1, CLIENTS do
    cl[ci] = assert(socket.connect("127.0.0.1", tonumber(port)))
    sv[ci] = assert(server:accept())
  end
  local served, answered = 0, 0

  local function client_send(ci, i)
    local req = ci .. " " .. i
    assert(cl[ci]:send(req .. "\n"))
    return req
  end
  local function server_answer(ci)
    local line = assert(sv[ci]:receive("*l"))
    assert(sv[ci]:send("ok " .. line .. "\n"))
    served = served + 1
  end
  local function client_read(ci, req)
    local resp = cl[ci]:receive("*l")
    if resp ~= "ok " .. req then error("client " .. ci .. " got " .. tostring(resp)) end
    answered = answered + 1
  end

  if not CO then
    local reqs = {}
    for i = 1, REQS do
      for ci = 1, CLIENTS do reqs[ci] = client_send(ci, i) end
      for ci = 1, CLIENTS do server_answer(ci) end
      for ci = 1, CLIENTS do client_read(ci, reqs[ci]) end
    end
  else
    local yield = coroutine.yield
    local function resume(co)                  -- an error in a coroutine is this program's
      local ok, err = coroutine.resume(co)
      if not ok then error(err, 0) end
    end
    local clients, servers = {}, {}
    for ci = 1, CLIENTS do
      clients[ci] = coroutine.create(function()
        for i = 1, REQS do
          local req = client_send(ci, i)
          yield()
          client_read(ci, req)
        end
      end)
      servers[ci] = coroutine.create(function()
        while true do yield(); server_answer(ci) end
      end)
      resume(servers[ci])
    end
    for ci = 1, CLIENTS do resume(clients[ci]) end
    for _ = 1, REQS do
      for ci = 1, CLIENTS do resume(servers[ci]) end
      for ci = 1, CLIENTS do resume(clients[ci]) end
    end
  end
  for ci = 1, CLIENTS do cl[ci]:close(); sv[ci]:close() end
  server:close()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  B.exchange_done(W, IMPL, CLIENTS * REQS, served, answered, wall, cpu)
end)
