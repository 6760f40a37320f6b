-- deepsmart_ssdp: the DeepSmart driver's SSDP search (drivers/DeepSmart/
-- deepsmart/src/ssdp.lua, unchanged). It loads `socket`, which on the hub is
-- cosock's socket module (the case gives it cosock.socket while the driver's
-- modules load), binds a udp socket to 0.0.0.0:0, sets "broadcast", sends an
-- M-SEARCH to 239.255.255.250:1900 (redirected to a local responder,
-- H.redirect_udp) and then loops on settimeout(time left, at least 0) and
-- receivefrom() until a receive fails, so its last wait has a zero timeout or
-- a small one. The responder answers with two gateways, one of them twice,
-- and a reply whose USN has no numeric uuid; the driver's config (a table of
-- settings) is given a shorter window than its 6 s.
-- needs: edge
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/DeepSmart/deepsmart/src")
local cosock = require "cosock"
local socket = require "cosock.socket"

local saved = package.loaded.socket
package.loaded.socket = socket
local config = require "config"
local SSDP = require "ssdp"
package.loaded.socket = saved
config.MC_TIMEOUT = -0.6 -- the search waits MC_TIMEOUT + 1 s

local responder = assert(socket.udp())
assert(responder:setsockname("127.0.0.1", 0))
local _, rport = responder:getsockname()
H.redirect_udp("239.255.255.250", 1900, tonumber(rport))

local function reply(usn)
  return table.concat({ "HTTP/1.1 200 OK", "CACHE-CONTROL: max-age=1800", "ST: DEEPSMART-ARM",
    "USN: " .. usn, "SERVER: DeepSmart/1.0", "", "" }, "\r\n")
end

H.task("responder", function()
  responder:settimeout(3)
  local q, ip, port = responder:receivefrom()
  H.say("responder: got", q and q:match("^[^\r]*"), q and q:match("\nST: ([^\r]*)"),
    q and q:match("\nHOST: ([^\r]*)"), ip)
  assert(responder:sendto(reply("uuid:1001::DEEPSMART-ARM"), ip, port))
  socket.sleep(0.05)
  assert(responder:sendto(reply("uuid:gateway::DEEPSMART-ARM"), ip, port))
  assert(responder:sendto(reply("uuid:1002::DEEPSMART-ARM"), ip, port))
  assert(responder:sendto(reply("uuid:1001::DEEPSMART-ARM"), ip, port))
  responder:close()
end)

H.task("discovery", function()
  local ok, bridges, err = SSDP.search(function(uuid, ip) H.say("callback", uuid, ip) end)
  local ids = {}
  for uuid, ip in pairs(bridges) do ids[#ids + 1] = uuid .. "=" .. ip end
  table.sort(ids)
  H.say("search", ok, table.concat(ids, " "), err)
end)
H.run()
