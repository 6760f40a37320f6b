-- lustre_ws: cosock/lustre's websocket client (lustre/ws.lua, unchanged) and a
-- websocket server written here with lustre's own server handshake
-- (Handshake.server over luncheon's Request.tcp_source) and frame code.
-- First connection: the server sends a text message, a binary message in two
-- fragments, a ping (the client's receive loop answers with a pong), and a
-- text frame written in two pieces with a pause between them (the client's
-- Frame.from_stream waits in the middle of the frame); the client sends a text
-- message back; last, the server sends a close frame, reads the client's
-- close frame and hangs up, while a second client task waits in ws:receive()
-- and must be woken with "closed" (a receive after that would wait for ever
-- on lustre's channel, on both libraries: it is not made).
-- Second connection: a 300-byte binary frame (16-bit length) written in three
-- pieces with pauses, then a frame cut off in the middle of its payload by
-- the server's close: the client's receive gets "closed".
-- The lustre receive loop selects over its socket and a channel receiver
-- together, alternating their order in the select list. (Its keep-alive is not
-- used: on the select's timeout lustre's loop indexes the nil ready list and
-- its task raises, on cosock as on cosock-native.)
-- Each side's lines are kept and printed at the end by the watchdog.
-- needs: lustre luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("lustre")
H.use("luncheon")
H.use("neturl", "lib")
local cosock = require "cosock"
local lustre = require "lustre"
local Handshake = require "lustre.handshake"
local Frame = require "lustre.frame"
local FrameHeader = require "lustre.frame.frame_header"
local OpCode = require "lustre.frame.opcode"
local CloseCode = require "lustre.frame.close".CloseCode
local Request = require "luncheon.request"
local Response = require "luncheon.response"

local srv, port = H.listen()
local server_say, client_say = H.buffer("server"), H.buffer("client")
local done = { server = false, client = false }

-- A server frame: not masked (RFC 6455 5.1).
local function frame(opcode, payload, fin)
  local h = FrameHeader.default():set_opcode(opcode):set_length(#payload)
  if fin == false then h:set_fin(false) end
  return Frame.from_parts(h, payload):encode()
end

local function read_frame(c)
  local f, err = Frame.from_stream(c)
  if not f then return nil, err end
  if f:payload_is_masked() then f:apply_mask() end
  return f
end

local function describe(f)
  local sub = f.header.opcode.sub
  if sub == "close" then return "close" end
  return sub .. " " .. string.format("%q", f.payload)
end

local function handshake(c)
  local req, err = Request.tcp_source(c)
  if not req then return nil, err end
  local res = Response.new(200, c)
  local hs, herr = Handshake.server(req, res)
  if not hs then return nil, herr end
  assert(res:send())
  return req.url and req.url.path or "?"
end

H.task("ws server", function()
  -- Connection 1.
  local c = assert(srv:accept())
  c:settimeout(3)
  server_say("handshake", handshake(c))
  assert(c:send(frame(OpCode.text(), "hello")))
  assert(c:send(frame(OpCode.binary(), "ab", false)))
  assert(c:send(frame(OpCode.continue(), "cd")))
  assert(c:send(frame(OpCode.ping(), "p1")))
  local f = assert(read_frame(c))
  server_say("got", describe(f))
  local split = frame(OpCode.text(), "in two pieces")
  assert(c:send(split:sub(1, 5)))
  cosock.socket.sleep(0.05)
  assert(c:send(split:sub(6)))
  server_say("got", describe(assert(read_frame(c))))
  assert(c:send(Frame.close(CloseCode.normal(), "server going away"):encode()))
  server_say("got", describe(assert(read_frame(c))))
  c:close()
  -- Connection 2: a long frame in pieces, then a frame cut by the close.
  c = assert(srv:accept())
  c:settimeout(3)
  server_say("handshake", handshake(c))
  local long = frame(OpCode.binary(), string.rep("0123456789", 30))
  for i = 1, #long, 120 do
    assert(c:send(long:sub(i, i + 119)))
    cosock.socket.sleep(0.02)
  end
  server_say("sent", #long, "bytes")
  local cut = frame(OpCode.text(), string.rep("x", 100))
  assert(c:send(cut:sub(1, 50)))
  cosock.socket.sleep(0.05)
  c:close()
  done.server = true
end)

H.task("client", function()
  local ws = lustre.WebSocket.client(assert(cosock.socket.tcp()), "/events",
    lustre.Config.default())
  client_say("connect", ws:connect("127.0.0.1", port))
  for _ = 1, 3 do
    local msg, err = ws:receive()
    client_say("receive", msg and msg.type, msg and msg.data, err)
  end
  client_say("send_text", ws:send_text("from the client"))
  -- A second task waits on the websocket while the server closes it.
  local tx, rx = cosock.channel.new()
  H.task("client waiter", function()
    local msg, err = ws:receive()
    tx:send({ msg and msg.type or "nil", err })
  end)
  local r = rx:receive()
  client_say("waiter got", r[1], r[2], "state", ws.state)
  client_say("send_text after", ws:send_text("late"))

  local ws2 = lustre.WebSocket.client(assert(cosock.socket.tcp()), "/long")
  client_say("connect 2", ws2:connect("127.0.0.1", port))
  local msg, err = ws2:receive()
  client_say("receive 2", msg and msg.type, msg and #msg.data, msg and msg.data:sub(1, 12), err)
  client_say("receive 2", ws2:receive())
  client_say("state 2", ws2.state)
  done.client = true
end)

H.watchdog(6, function() return done.server and done.client end,
  function() H.flush("server", "client") end)
H.run()
