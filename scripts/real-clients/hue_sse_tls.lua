-- hue_sse_tls: the Hue driver's EventSource (drivers/SmartThings/philips-hue/
-- src/lunchbox/sse/eventsource.lua, unchanged) over HTTPS with no socket
-- builder, so it makes its own connection: cosock.ssl.wrap with verify "none",
-- settimeout(60) again on the TLS wrapper, dohandshake. The server (cosock.ssl
-- in server mode, a certificate made at run time) writes the response head
-- and three events in one TLS record, so the client's receive("*l") finds the
-- later lines in LuaSec's buffer; then two events written in pieces with
-- pauses. After the fifth event the driver calls close() while the
-- EventSource's task waits in receive (on cosock it then waits for its 60 s
-- timeout; the watchdog ends the program).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/philips-hue/src")
H.use("neturl", "lib")
H.use("luncheon")
local cosock = require "cosock"
local ssl = require "cosock.ssl"
local EventSource = require "lunchbox.sse.eventsource"

local tmp = os.tmpname()
local tls = H.make_cert(tmp .. ".d")
local srv, port = H.listen()
local got_tx, got_rx = cosock.channel.new()
local server_say, client_say = H.buffer("server"), H.buffer("client")
local closed = false

local function event(i)
  local ev = string.format("id: %d\nevent: update\ndata: {\"n\":%d}\n\n", i, i)
  return string.format("%x\r\n%s\r\n", #ev, ev)
end

H.serve_once(srv, "sse server", function(c)
  c:settimeout(3)
  local s = assert(ssl.wrap(c, { mode = "server", protocol = "any", key = tls.key, certificate = tls.certificate }))
  s:settimeout(3)
  assert(s:dohandshake())
  local req = H.read_request(s)
  server_say("request", req.line, "accept=" .. tostring(req.headers.accept))
  assert(s:send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    .. event(1) .. event(2) .. event(3)))
  for i = 4, 5 do
    local e = event(i)
    assert(s:send(e:sub(1, 9)))
    cosock.socket.sleep(0.03)
    assert(s:send(e:sub(10)))
  end
  server_say("sent 5 events")
  server_say("receive", s:receive("*a"))
  s:close()
end)

H.task("client", function()
  local es = EventSource.new(string.format("https://127.0.0.1:%d/eventstream/clip/v2", port),
    { ["hue-application-key"] = "k" })
  es.onopen = function() client_say("onopen, ready_state", es.ready_state) end
  es.onmessage = function(ev)
    client_say("onmessage", ev.type, ev.lastEventId, ev.data)
    got_tx:send(ev.lastEventId)
  end
  es.onerror = function() client_say("onerror") end
  for _ = 1, 5 do got_rx:receive() end
  client_say("close() while the source waits in receive")
  es:close()
  client_say("closed, ready_state", es.ready_state)
  closed = true
end)

H.watchdog(3, function() return closed end, function()
  cosock.socket.sleep(0.2)
  H.flush("server", "client")
  os.execute("rm -rf '" .. tmp .. "' '" .. tmp .. ".d'")
  os.exit(0)
end)
H.run()
