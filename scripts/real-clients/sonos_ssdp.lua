-- sonos_ssdp: the Sonos driver's SSDP search (drivers/SmartThings/sonos/src/
-- ssdp.lua, with its cosock/stream.lua and result.lua, unchanged). The search
-- handle is a table with its own setwaker/_wake and the udp socket's
-- inner_sock, selected like a socket. The case redirects the M-SEARCH that
-- the code multicasts to 239.255.255.250:1900 to a local responder on
-- 127.0.0.1 (by wrapping the sendto of the udp sockets cosock.socket.udp
-- makes: the code itself is not touched), which answers with a valid reply,
-- one whose location is not the sender's address, one missing headers and one
-- that is not "200 OK". The search (MX 1) then runs out.
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/sonos/src")
H.use("luncheon")
H.use("neturl", "lib")
require "result" { register_globals = true }
local cosock = require "cosock"
local socket = require "cosock.socket"
local Ssdp = require "ssdp"

local TERM = "urn:smartspeaker-audio:service:SpeakerGroup:1"
local responder = assert(socket.udp())
assert(responder:setsockname("127.0.0.1", 0))
local _, rport = responder:getsockname()

local udp = socket.udp
socket.udp = function(...)
  local s, err = udp(...)
  if s then
    local sendto = s.sendto
    s.sendto = function(self, data, ip, port)
      if ip == "239.255.255.250" and port == 1900 then ip, port = "127.0.0.1", rport end
      return sendto(self, data, ip, port)
    end
  end
  return s, err
end

local function reply(location, extra, status)
  return table.concat({
    status or "HTTP/1.1 200 OK",
    "CACHE-CONTROL: max-age = 1800",
    "LOCATION: " .. location,
    "SERVER: Linux UPnP/1.0 Sonos/80.1",
    "ST: " .. TERM,
    "USN: uuid:RINCON_0001::" .. TERM,
    extra or "HOUSEHOLD.SMARTSPEAKER.AUDIO: Sonos_1",
    "", "",
  }, "\r\n")
end

H.task("responder", function()
  responder:settimeout(5)
  local msg, ip, port = responder:receivefrom()
  H.say("responder: got", msg and msg:match("^[^\r]*"), msg and msg:match("\nST: ([^\r]*)"),
    msg and msg:match("MX: ([^\r]*)"), ip)
  for _, r in ipairs({
    reply("http://127.0.0.1:1400/xml/device_description.xml"),
    reply("http://10.9.9.9:1400/xml/device_description.xml"),
    reply("http://127.0.0.1:1400/xml/device_description.xml", "X-NOTHING: 1"),
    reply("http://127.0.0.1:1400/xml/device_description.xml", nil, "HTTP/1.1 404 Not Found"),
  }) do
    assert(responder:sendto(r, ip, port))
  end
  responder:close()
end)

H.task("search", function()
  local handle = assert(Ssdp.new_search_instance(1))
  handle:register_search_term(TERM, {
    required_headers = { "usn", "server", "location", "household.smartspeaker.audio" },
    validator = function(h) return h:get_one("server"):find("Sonos") ~= nil, "not a Sonos" end,
    post_processor = function(h) return h:get_one("usn") end,
  })
  handle:enable_search_term(TERM)
  handle:multicast_m_search()
  for _ = 1, 10 do
    local ready, _, err = socket.select({ handle }, nil, handle.time_remaining)
    if err then
      H.say("search: select", err)
      break
    end
    H.say("search: select ready", #ready, ready[1] == handle)
    local r = handle:next_msearch_response()
    if r == nil then
      H.say("search: complete")
      break
    end
    H.say("search: response", tostring(r))
  end
end)
H.run()
