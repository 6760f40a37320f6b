-- sonos_ws: the Sonos driver's websocket client (drivers/SmartThings/sonos/src/
-- lustre/ws.lua with its frame, handshake and quietlog modules, unchanged)
-- against a local websocket server written here with lustre's own frame
-- decoding. The client connects and handshakes, waits for the server's text
-- message in select over the WebSocket object (its setwaker reads the
-- channel's link.queue), sends one back, then closes with a close frame as
-- the driver does when a speaker goes away; the server answers the close and
-- hangs up, and the client's receive loop closes its socket and its send
-- channel's receiver.
-- Each side's lines are kept and printed at the end (by the watchdog, which
-- also ends the program if the driver never gets out of close()).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/sonos/src")
H.use("luncheon")
H.use("neturl", "lib")
local cosock = require "cosock"
local WebSocket = require "lustre.ws"
local Config = require "lustre.config"
local Key = require "lustre.handshake.key"
local Frame = require "lustre.frame"
local FrameHeader = require "lustre.frame.frame_header"
local OpCode = require "lustre.frame.opcode"
local CloseCode = require "lustre.frame.close".CloseCode

local srv, port = H.listen()

local function read_frame(c)
  local f, err = Frame.from_stream(c)
  if not f then return nil, err end
  if f:payload_is_masked() then f:apply_mask() end
  return f
end

local server_say, driver_say = H.buffer("server"), H.buffer("driver")
local server_done, driver_done = false, false

H.serve_once(srv, "ws server", function(c)
  c:settimeout(2)
  local req = H.read_request(c)
  server_say(tostring(req.line), "upgrade=" .. tostring(req.headers.upgrade))
  assert(c:send("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    .. "Sec-WebSocket-Accept: " .. Key.build_accept_from(req.headers["sec-websocket-key"]) .. "\r\n\r\n"))
  local hello = "{\"groupId\":\"G1\",\"type\":\"groupCoordinatorChanged\"}"
  assert(c:send(Frame.from_parts(FrameHeader.default():set_opcode(OpCode.text()):set_length(#hello), hello)
    :encode()))
  while true do
    local f, err = read_frame(c)
    if not f then
      server_say("read", err)
      break
    end
    server_say("frame", f.header.opcode.sub, f.header.opcode.sub == "text" and f.payload or "")
    if f:is_close() then
      -- Answer and hang up, as a speaker does; what the client writes after
      -- that depends on its random mask, so it is not read.
      assert(c:send(Frame.close(CloseCode.normal(), "bye"):encode()))
      server_say("answered the close")
      break
    end
  end
  c:close()
  server_done = true
end)

H.task("driver", function()
  local ws = WebSocket.client(assert(cosock.socket.tcp()), "/websocket/api", Config.default())
  driver_say("connect", ws:connect("127.0.0.1", port))
  local ready, _, err = cosock.socket.select({ ws }, nil, 5)
  driver_say("select", ready and #ready, ready and ready[1] == ws, err)
  local msg, rerr = ws:receive()
  driver_say("receive", msg and msg.type, msg and msg.data, rerr)
  driver_say("send_text", ws:send_text("{\"namespace\":\"groups\",\"command\":\"getGroups\"}"))
  driver_say("close", ws:close(CloseCode.normal(), "driver removed"))
  driver_say("state", ws.state)
  driver_say("receive after close", ws:receive())
  driver_done = true
end)

H.watchdog(4, function() return server_done and driver_done end,
  function() H.flush("server", "driver") end)
H.run()
