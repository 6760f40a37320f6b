-- denon_upnp: rtyle/st-edge's UPnP service (driver/denon-avr/package/src/
-- upnp.lua with its http, reader, xml, classify and date modules, unchanged).
-- Its one task selects over a set of "willing" receivers of every kind at
-- once: a udp socket (in the set before its first send, so selected while
-- never bound), a listening tcp socket (eventing), each accepted connection,
-- and a channel receiver (commands and stop), with an empty send list and a
-- timeout that is nil (no limit) until a subscription sets one. Its HTTP
-- reads use settimeout(0), select with a read timeout and receive(2048).
-- The case: an M-SEARCH multicast (redirected to a local responder,
-- H.redirect_udp) answered with a valid reply for the uuid the driver waits
-- for and one for another device; the service fetches the description from
-- the case's device server (written in one piece), the driver subscribes to
-- events (SUBSCRIBE, answered with a SID), the device connects to the
-- eventing port and sends a NOTIFY, then hangs up; the driver unsubscribes
-- and stops the service (closing the channel's sender, which ends the task).
-- Lines of the device, of the driver's task and of its callbacks (run by the
-- service's task) are kept apart and printed at the end.
-- needs: st_edge st_edge_xml2lua
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
-- Before the stubs: the package has its own xml2lua and xmlhandler (links to
-- the modules/xml2lua submodule); its date module comes from luarocks, so
-- stubs/date.lua stands in for it.
local src = H.use("st_edge") .. "/driver/denon-avr/package/src"
package.path = src .. "/?.lua;" .. package.path
local cosock = require "cosock"
local socket = require "cosock.socket"

local responder = assert(socket.udp())
assert(responder:setsockname("127.0.0.1", 0))
local _, rport = responder:getsockname()
H.redirect_udp("239.255.255.250", 1900, tonumber(rport))
-- The service logs the ports the system picked (its eventing port, a peer's).
H.mask_log_ports()
local UPnP = require "upnp"

local device_say, driver_say, event_say = H.buffer("device"), H.buffer("driver"), H.buffer("callbacks")
local srv, port = H.listen()
local location = "http://127.0.0.1:" .. port .. "/desc.xml"
local DESC = '<?xml version="1.0"?><root xmlns="urn:schemas-upnp-org:device-1-0"><device>'
  .. '<friendlyName>Living Room AVR</friendlyName><UDN>uuid:avr-1</UDN></device></root>'
local step_tx, step_rx = cosock.channel.new()
local done = false

local function http_reply(c, status, headers, body)
  local t = { "HTTP/1.1 " .. status }
  for _, h in ipairs(headers) do t[#t + 1] = h end
  t[#t + 1] = "Content-Length: " .. #(body or "")
  t[#t + 1] = ""
  t[#t + 1] = body or ""
  assert(c:send(table.concat(t, "\r\n")))
end

H.task("responder", function()
  responder:settimeout(3)
  local q, ip, qport = responder:receivefrom()
  device_say("search", q and q:match("^[^\r]*"), q and q:match("\nST: ([^\r]*)"), q and q:match("\nMX: ([^\r]*)"))
  for _, uuid in ipairs({ "other-9", "avr-1" }) do
    assert(responder:sendto(table.concat({ "HTTP/1.1 200 OK", "CACHE-CONTROL: max-age=1800",
      "LOCATION: " .. location, "ST: urn:schemas-upnp-org:device:MediaRenderer:1",
      "USN: uuid:" .. uuid .. "::urn:schemas-upnp-org:device:MediaRenderer:1", "", "" }, "\r\n"), ip, qport))
  end
end)

H.task("device", function()
  srv:settimeout(3)
  for _ = 1, 3 do
    local c = assert(srv:accept())
    c:settimeout(3)
    local req = H.read_request(c)
    device_say("request", req.line, req.headers.nt or "", req.headers.statevar or "", req.headers.sid or "",
      req.headers.callback and req.headers.callback:gsub(":%d+/", ":<eventing>/") or "")
    if req.line:match("^GET") then
      http_reply(c, "200 OK", { "Content-Type: text/xml" }, DESC)
    elseif req.headers.sid then
      http_reply(c, "200 OK", {})
    else
      http_reply(c, "200 OK", { "SID: uuid:sub-1", "TIMEOUT: Second-300" })
    end
    -- The client closes after the reply.
    device_say("then", c:receive("*a"))
    c:close()
    if req.line:match("^SUBSCRIBE") then step_tx:send("subscribed") end
    if req.line:match("^GET") then
      step_tx:send("described")
      -- NOTIFY to the callback the SUBSCRIBE gave, once it comes.
    end
    if req.line:match("^SUBSCRIBE") then
      local cb_port = tonumber(req.headers.callback:match(":(%d+)/"))
      local path = req.headers.callback:match("^<http://[^/]+(/[^>]*)>")
      local e = assert(socket.connect("127.0.0.1", cb_port))
      local body = '<?xml version="1.0"?><e:propertyset xmlns:e="urn:schemas-upnp-org:event-1-0">'
        .. "<e:property><Volume>42</Volume></e:property></e:propertyset>"
      assert(e:send(table.concat({ "NOTIFY " .. path .. " HTTP/1.1", "HOST: 127.0.0.1",
        "CONTENT-TYPE: text/xml", "NT: upnp:event", "NTS: upnp:propchange", "SID: uuid:sub-1", "SEQ: 0",
        "CONTENT-LENGTH: " .. #body, "", body }, "\r\n")))
      device_say("notified", path)
      socket.sleep(0.1)
      e:close()
      step_tx:send("notified")
    end
  end
  done = true
end)

local upnp = UPnP(1, "UPnP")
local function on_discovery(address, _, header, description)
  event_say("discovered", address, tostring(header.usn), description.root.device.friendlyName)
end
local function on_event(name, value) event_say("event", name, value) end
upnp:discovery_notify(UPnP.USN("uuid:avr-1"), on_discovery)

H.task("driver", function()
  upnp:discovery_search_multicast("urn:schemas-upnp-org:device:MediaRenderer:1")
  driver_say("step", step_rx:receive())
  local sub = upnp:eventing_subscribe(location, "/event", "avr-1", "RenderingControl", { "Volume" }, on_event)
  driver_say("step", step_rx:receive())
  driver_say("step", step_rx:receive())
  sub:unsubscribe()
  driver_say("sid after unsubscribe", tostring(sub.sid))
  upnp:stop()
  while not done do socket.sleep(0.05) end
end)

H.watchdog(5, function() return done end, function()
  H.flush("device", "driver", "callbacks")
  responder:close()
end)
H.run()
