-- bench/lib/dns_server.lua: a DNS server for the dns bench, in its own
-- process so that it costs the process under test nothing. Plain blocking
-- LuaSocket over UDP on 127.0.0.1, with the wire format of the specs' server
-- (spec/support/dns_server.lua). Names starting with "slow" are answered
-- DELAY seconds later (others at once); every name has the A record
-- 127.0.0.1. Prints "PORT <n>" once it listens; a datagram "QUIT" ends it.
-- Usage: lua bench/lib/dns_server.lua [DELAY]   (default 0.2)
local here = arg[0]:match("^(.*/)") or "./"
package.path = here .. "../../?.lua;" .. package.path
local D = require "spec.support.dns_server"
local socket = require "socket"

local DELAY = tonumber(arg[1]) or 0.2
local RULE = { a = { "127.0.0.1" } }

local udp = assert(socket.udp())
assert(udp:setsockname("127.0.0.1", 0))
print("PORT " .. select(2, udp:getsockname()))
io.stdout:flush()

local pending, head = {}, 1 -- delayed answers in deadline order (one delay for all)
while true do
  local wait = nil
  if pending[head] then wait = math.max(0, pending[head].due - socket.gettime()) end
  udp:settimeout(wait)
  local msg, ip, port = udp:receivefrom()
  if msg == "QUIT" then break end
  local now = socket.gettime()
  if msg then
    local q = D.parse_query(msg)
    if q then
      local reply = D.answer(q, RULE, "udp")
      if q.name:sub(1, 4) == "slow" then
        pending[#pending + 1] = { due = now + DELAY, reply = reply, ip = ip, port = port }
      else
        udp:sendto(reply, ip, port)
      end
    end
  end
  while pending[head] and pending[head].due <= now do
    local p = pending[head]
    pending[head] = nil
    head = head + 1
    udp:sendto(p.reply, p.ip, p.port)
  end
end
