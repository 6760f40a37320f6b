-- mdns_resolve: st-edge's mDNS host-name resolver (util/resolve.lua, used by
-- the legrand-rflc driver, unchanged). It sends its question from a fresh udp
-- socket (never bound: the sendto binds it) to 224.0.0.251:5353, sleeps
-- 0.1 s, then loops on select({resolver}, {}, 0.001) (an empty send list and a
-- 1 ms timeout) and receive(2048) while answers are ready. The case redirects
-- the question to a local responder (H.redirect_udp), which answers at once
-- with two valid answers, one for another name, one too short and one with
-- another transaction id; a last, valid one comes after the resolver's window
-- and must not be seen. Then the same resolver is run once more with no
-- answer at all.
-- needs: st_edge
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("st_edge", "util")
local cosock = require "cosock"
local socket = require "cosock.socket"

local responder = assert(socket.udp())
assert(responder:setsockname("127.0.0.1", 0))
local _, rport = responder:getsockname()
H.redirect_udp("224.0.0.251", 5353, tonumber(rport))
local resolve = require "resolve"

local function labels(name)
  local t = {}
  for l in name:gmatch("[%a%d-]+") do t[#t + 1] = string.pack("> s1", l) end
  return table.concat(t)
end

local function answer(id, name, a, b, c, d)
  return string.pack("> I2 I2 I2 I2 I2 I2 z I2 I2 I4 I2 BBBB", id, 0x8400, 0, 1, 0, 0,
    labels(name), 1, 0x8001, 120, 4, a, b, c, d)
end

H.task("responder", function()
  responder:settimeout(3)
  local q, ip, port = responder:receivefrom()
  H.say("responder: question", q and #q, q and q:find(labels("lc7001.local"), 1, true) ~= nil, ip)
  for _, r in ipairs({
    answer(0, "lc7001.local", 10, 0, 0, 5),
    answer(0, "other.local", 10, 0, 0, 9),
    answer(0, "lc7001.local", 10, 0, 0, 6):sub(1, 20),
    answer(7, "lc7001.local", 10, 0, 0, 7),
    answer(0, "lc7001.local", 10, 0, 0, 6),
  }) do
    assert(responder:sendto(r, ip, port))
  end
  socket.sleep(0.3)
  assert(responder:sendto(answer(0, "lc7001.local", 10, 0, 0, 8), ip, port))
  H.say("responder: sent a late answer")
end)

H.task("resolver", function()
  resolve("lc7001.local", function(address) H.say("resolved", address) end)
  H.say("resolve returned")
  socket.sleep(0.4)
  resolve("nobody.local", function(address) H.say("resolved", address) end)
  H.say("resolve returned")
end)
H.run()
