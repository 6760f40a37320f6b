-- W4's requests with no runtime at all: what LuaSocket and the Lua VM cost
-- by themselves. 100 connections, 100 requests each ("<client> <i>" answered
-- by "ok <client> <i>"), made in the order a pass-based loop runs them (every
-- client sends, every server answers, every client reads); the data is always
-- there already, so nothing waits and nothing is polled.
-- Usage: LUA_PATH/LUA_CPATH as for the bench; lua5.3 w4_plain.lua [REQS] [coroutines]
--   coroutines: one coroutine per connection end, resumed by hand in that order
--   (adds what switching coroutines costs, still with no runtime).
local socket = require "socket"
local CLIENTS, REQS = 100, tonumber(arg[1] or 100)
local CO = arg[2] == "coroutines"

local server = assert(socket.bind("127.0.0.1", 0, 1024))
local _, port = server:getsockname()
-- Timed like the W4 programs: connecting, accepting and closing count too.
local t0 = socket.gettime()
local cl, sv = {}, {}
for ci = 1, CLIENTS do
  cl[ci] = assert(socket.connect("127.0.0.1", tonumber(port)))
  sv[ci] = assert(server:accept())
end
local answered = 0

local function client_send(ci, i)
  local req = ci .. " " .. i
  assert(cl[ci]:send(req .. "\n"))
  return req
end
local function server_answer(ci)
  local line = assert(sv[ci]:receive("*l"))
  assert(sv[ci]:send("ok " .. line .. "\n"))
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
  local yield, resume = coroutine.yield, coroutine.resume
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
  for ci = 1, CLIENTS do assert(resume(clients[ci])) end
  for _ = 1, REQS do
    for ci = 1, CLIENTS do assert(resume(servers[ci])) end
    for ci = 1, CLIENTS do assert(resume(clients[ci])) end
  end
end
for ci = 1, CLIENTS do cl[ci]:close(); sv[ci]:close() end
server:close()
local wall = socket.gettime() - t0
if answered ~= CLIENTS * REQS then
  print(("FAIL w4floor answered=%d want %d"):format(answered, CLIENTS * REQS))
  os.exit(1)
end
print(("RESULT w4floor impl=%s ops=%d wall=%.6f rate=%.0f"):format(
  CO and "lua-coroutines" or "lua-plain", answered, wall, answered / wall))
