-- sonos_router: the Sonos driver's websocket router (drivers/SmartThings/sonos/
-- src/api/sonos_websocket_router.lua, with the driver's lustre copy, unchanged):
-- one task, started when the module loads, selects for ever over a control
-- channel receiver (with settimeout(0.5)) and every open WebSocket object
-- (each a lustre client over cosock.ssl whose own receive loop selects over
-- the TLS wrapper and a channel). The case's server speaks TLS (a certificate
-- made at run time) and websocket for two players: it sends a message to each
-- (fanned out to the registered listeners) and reads a command the driver
-- sends through the control channel (the router answers on the reply channel
-- it was given; that message is also what makes the router's task, which
-- waits on the control channel alone until something comes there, list the
-- two websockets), then the driver asks to close player 1's socket (the router
-- does so on its next pass, which the server's next message to player 2
-- brings: lustre's close waits on a channel with a 0.5 s timeout, and the
-- server answers the close frame), and last the server drops player 2's
-- connection without a close frame. The router never returns; the watchdog
-- ends the program once the server is done, printing the lines of the
-- server, of the driver's task and of the listeners (the router's task).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/sonos/src")
H.use("luncheon")
H.use("neturl", "lib")
-- lustre seeds math.random with os.time() and logs a websocket's random id:
-- unseeded, the ids are the same in every run.
math.randomseed = function() end
local cosock = require "cosock"
local socket = require "cosock.socket"
local ssl = require "cosock.ssl"
local Key = require "lustre.handshake.key"
local Frame = require "lustre.frame"
local FrameHeader = require "lustre.frame.frame_header"
local OpCode = require "lustre.frame.opcode"
local CloseCode = require "lustre.frame.close".CloseCode
local Router = require "api.sonos_websocket_router"
H.mask_log_ports() -- (it logs the port it connects to)

local tmp = os.tmpname()
local tls = H.make_cert(tmp .. ".d")
local srv, port = H.listen()
local server_say, driver_say, router_say = H.buffer("server"), H.buffer("driver"), H.buffer("listeners")
local seen = 0
local seen_tx, seen_rx = cosock.channel.new()
local step_tx, step_rx = cosock.channel.new()
local done = false

local function text(s)
  return Frame.from_parts(FrameHeader.default():set_opcode(OpCode.text()):set_length(#s), s):encode()
end

local function read_frame(c)
  local f, err = Frame.from_stream(c)
  if not f then return nil, err end
  if f:payload_is_masked() then f:apply_mask() end
  return f
end

local function accept_ws()
  local c = assert(srv:accept())
  c:settimeout(3)
  c = assert(ssl.wrap(c, { mode = "server", protocol = "any", key = tls.key, certificate = tls.certificate }))
  assert(c:dohandshake())
  local req = H.read_request(c)
  server_say(req.line, "protocol=" .. tostring(req.headers["sec-websocket-protocol"]),
    "key header=" .. tostring(req.headers["x-sonos-api-key"]))
  assert(c:send("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    .. "Sec-WebSocket-Accept: " .. Key.build_accept_from(req.headers["sec-websocket-key"]) .. "\r\n\r\n"))
  return c
end

H.task("player server", function()
  local c1 = accept_ws()
  local c2 = accept_ws()
  assert(c1:send(text('{"player":1,"event":"volume"}')))
  server_say("driver saw", seen_rx:receive())
  assert(c2:send(text('{"player":2,"event":"mute"}')))
  server_say("driver saw", seen_rx:receive())
  local f = assert(read_frame(c2))
  server_say("player 2 got", f.header.opcode.sub, f.payload)
  server_say("step", step_rx:receive())
  assert(c2:send(text('{"player":2,"event":"groups"}')))
  f = assert(read_frame(c1))
  server_say("player 1 got", f.header.opcode.sub)
  assert(c1:send(Frame.close(CloseCode.normal(), "bye"):encode()))
  c1:close()
  server_say("driver saw", seen_rx:receive())
  server_say("step", step_rx:receive())
  c2:close()
  server_say("dropped player 2")
  server_say("step", step_rx:receive())
  done = true
end)

local function listener(name)
  return {
    device = { label = name },
    on_message = function(_, msg)
      router_say(name .. " message", msg.type, msg.data)
      seen = seen + 1
      seen_tx:send(name)
    end,
    on_close = function() router_say(name .. " closed"); step_tx:send(name .. " closed") end,
    on_error = function(_, err) router_say(name .. " error", err) end,
  }
end

H.task("driver", function()
  local url = "wss://127.0.0.1:" .. port .. "/websocket/api"
  driver_say("open 1", Router.open_socket_for_player("HH", "P1", url, "case-api-key"))
  driver_say("open 2", Router.open_socket_for_player("HH", "P2", url, "case-api-key"))
  driver_say("connected", Router.is_connected("hh/p1"), Router.is_connected("hh/p2"))
  driver_say("listen 1", Router.register_listener_for_socket(listener("player 1"), "hh/p1"))
  driver_say("listen 2", Router.register_listener_for_socket(listener("player 2"), "hh/p2"))
  -- The router's task waits on its control channel alone until something
  -- comes there (it lists the websockets again only then): the command is
  -- what makes it see the two players.
  local reply_tx, reply_rx = cosock.channel.new()
  Router.send_message_to_player("hh/p2", '{"namespace":"groups","command":"getGroups"}', reply_tx)
  local r = reply_rx:receive()
  driver_say("reply", r.n, r[1], r[2])
  while seen < 2 do cosock.socket.sleep(0.01) end -- the server's two messages
  driver_say("close unknown", Router.close_socket_for_player("hh/p9"))
  driver_say("close 1", Router.close_socket_for_player("hh/p1"))
  step_tx:send("closing player 1")
end)

H.watchdog(5, function() return done end, function()
  H.flush("server", "driver", "listeners")
  os.execute("rm -rf '" .. tmp .. "' '" .. tmp .. ".d'")
  if done then
    H.say("the router's task selects for ever: program ended")
    os.exit(0)
  end
end)
H.run()
