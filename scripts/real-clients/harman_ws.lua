-- harman_ws: the Harman Luxury driver's websocket client (drivers/SmartThings/
-- harman-luxury/src/lustre/ws.lua, unchanged; its other lustre modules are
-- cosock/lustre's, as on the hub) with its keep-alive on, as
-- hl_websocket.lua makes it (Config:keep_alive; 0.2 s here). Its receive loop
-- selects over the socket and its send channel with the keep-alive as the
-- timeout; at each timeout it sends a ping, and at the third timeout with
-- two pings unanswered it gives up. The server (written here with lustre's
-- handshake and frames) sends a message, answers the first ping with a pong,
-- then answers no more: the driver's task waiting in ws:receive() gets "no
-- response to ping" and the server sees the connection closed.
-- needs: edge lustre luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/harman-luxury/src")
H.use("lustre")
H.use("luncheon")
H.use("neturl", "lib")
math.randomseed = function() end -- (lustre's masks and keys: the same in every run)
local cosock = require "cosock"
local ws = require "lustre.ws"
local Config = require "lustre.config"
local Handshake = require "lustre.handshake"
local Frame = require "lustre.frame"
local FrameHeader = require "lustre.frame.frame_header"
local OpCode = require "lustre.frame.opcode"
local Request = require "luncheon.request"
local Response = require "luncheon.response"

local srv, port = H.listen()
local server_say, driver_say = H.buffer("server"), H.buffer("driver")
local done = { server = false, driver = false }

local function read_frame(c)
  local f, err = Frame.from_stream(c)
  if not f then return nil, err end
  if f:payload_is_masked() then f:apply_mask() end
  return f
end

H.serve_once(srv, "speaker", function(c)
  c:settimeout(3)
  local req = assert(Request.tcp_source(c))
  local res = Response.new(200, c)
  assert(Handshake.server(req, res))
  assert(res:send())
  local msg = '{"path":"player:volume","value":{"i32_":30}}'
  assert(c:send(Frame.from_parts(FrameHeader.default():set_opcode(OpCode.text()):set_length(#msg), msg):encode()))
  local answered = false
  while true do
    local f, err = read_frame(c)
    if not f then server_say("read", err); break end
    server_say("got", f.header.opcode.sub, f.payload)
    if f.header.opcode.sub == "ping" and not answered then
      answered = true
      assert(c:send(Frame.pong(f.payload):encode()))
      server_say("answered the ping")
    end
  end
  c:close()
  done.server = true
end)

H.task("driver", function()
  local sock = assert(cosock.socket.tcp())
  sock:settimeout(3)
  local w = ws.client(sock, "/", Config.default():keep_alive(0.2))
  driver_say("connect", w:connect("127.0.0.1", port))
  local msg, err = w:receive()
  driver_say("receive", msg and msg.type, msg and msg.data, err)
  driver_say("receive", w:receive())
  driver_say("state", w.state)
  done.driver = true
end)

H.watchdog(5, function() return done.server and done.driver end,
  function() H.flush("server", "driver") end)
H.run()
