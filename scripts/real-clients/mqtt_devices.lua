-- mqtt_devices: the MQTT client of toddaustin07/MQTTDevices (a community Edge
-- driver; its hubpackage/src/mqtt is luamqtt with a connector edited to use
-- cosock.socket, unchanged here) run as the driver runs it: mqtt.run_sync in
-- a task of its own, the keep-alive timer through the driver's
-- call_on_schedule (the global thisDriver, stubbed here with a cosock task),
-- subscribe from the connect handler, acknowledge from the message handler.
-- The broker is written here. First connection: CONNACK, SUBACK, a QoS 0
-- PUBLISH, a QoS 1 PUBLISH written in three pieces with pauses (the client
-- reads it with receive(1) and receive(n) while waiting without a timeout),
-- a publish from another task of the driver (a command handler) while the
-- run_sync task waits in receive on the same socket, then the broker hangs
-- up: run_sync returns false, "closed", as the driver's reconnect loop
-- expects. Second connection: the driver calls client:disconnect() from
-- another task while run_sync's task waits in receive with no timeout
-- (init_mqtt does so when the settings change): the DISCONNECT is sent and
-- the socket closed under the waiting task.
-- Broker and driver lines are kept and printed at the end by the watchdog.
-- needs: mqtt_devices
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("mqtt_devices", "hubpackage/src")
local cosock = require "cosock"

-- The hub driver's timers, as far as luamqtt uses them: a repeating timer
-- that cancel_timer stops at once.
thisDriver = {}
function thisDriver:call_on_schedule(interval, fn, name)
  local tx, rx = cosock.channel.new()
  local timer = { tx = tx }
  cosock.spawn(function()
    while true do
      local r = cosock.socket.select({ rx }, nil, interval)
      if r then return end
      fn()
    end
  end, name)
  return timer
end
function thisDriver:cancel_timer(t) t.tx:send("cancel") end

local mqtt = require "mqtt"
local srv, port = H.listen()
local broker_say, driver_say = H.buffer("broker"), H.buffer("driver")
local done = { broker = false, driver = false }

local names = { "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
  "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT" }

local function varlen(n)
  local out = {}
  repeat
    local b = n % 128
    n = n // 128
    if n > 0 then b = b + 128 end
    out[#out + 1] = string.char(b)
  until n == 0
  return table.concat(out)
end

local function str(s) return string.char(#s // 256, #s % 256) .. s end

-- One packet from the client: its type's name and its body.
local function read_packet(c)
  local first, err = c:receive(1)
  if not first then return nil, err end
  local len, mul = 0, 1
  repeat
    local b = assert(c:receive(1)):byte()
    len = len + (b % 128) * mul
    mul = mul * 128
  until b < 128
  local body = len > 0 and assert(c:receive(len)) or ""
  return names[first:byte() // 16], body
end

local function publish(topic, payload, qos, id)
  local body = str(topic) .. (qos > 0 and string.char(id // 256, id % 256) or "") .. payload
  return string.char(0x30 + qos * 2) .. varlen(#body) .. body
end

local function expect(c, want)
  local name, body = read_packet(c)
  if name == "PUBLISH" then
    local tl = body:byte(1) * 256 + body:byte(2)
    broker_say("got", name, body:sub(3, 2 + tl), body:sub(3 + tl))
  else
    broker_say("got", name, name == want and "as expected" or ("(wanted " .. want .. ")"))
  end
  return name, body
end

H.task("broker", function()
  local c = assert(srv:accept())
  c:settimeout(3)
  expect(c, "CONNECT")
  assert(c:send("\32\2\0\0"))
  local _, sub = expect(c, "SUBSCRIBE")
  assert(c:send("\144\3" .. sub:sub(1, 2) .. "\1"))
  assert(c:send(publish("home/lamp", "on", 0)))
  local p = publish("home/door", "open", 1, 7)
  assert(c:send(p:sub(1, 1)))
  cosock.socket.sleep(0.03)
  assert(c:send(p:sub(2, 6)))
  cosock.socket.sleep(0.03)
  assert(c:send(p:sub(7)))
  expect(c, "PUBACK")
  expect(c, "PUBLISH")
  c:close()
  broker_say("hung up")

  c = assert(srv:accept())
  c:settimeout(3)
  expect(c, "CONNECT")
  assert(c:send("\32\2\0\0"))
  expect(c, "SUBSCRIBE")
  expect(c, "DISCONNECT")
  broker_say("read after", c:receive(1))
  c:close()
  done.broker = true
end)

local function new_client(on_connect)
  local client = mqtt.client { uri = "127.0.0.1:" .. port, clean = true, id = "st-hub" }
  client:on {
    connect = function(connack)
      driver_say("connected", connack.rc)
      on_connect(client)
    end,
    subscribe = function() driver_say("suback") end,
    message = function(msg)
      assert(client:acknowledge(msg))
      driver_say("message", msg.topic, msg.payload, "qos", msg.qos)
      if msg.topic == "home/door" then
        cosock.spawn(function()
          driver_say("publish", client:publish { topic = "hub/ack", payload = "door seen", qos = 0 })
        end, "command handler")
      end
    end,
    error = function(err) driver_say("client error", err) end,
    close = function(conn) driver_say("close", conn.close_reason) end,
  }
  return client
end

H.task("MQTT synch mode", function()
  local client = new_client(function(cl) cl:subscribe { topic = "home/#", qos = 1 } end)
  driver_say("run_sync 1", mqtt.run_sync(client))

  local client2
  client2 = new_client(function(cl)
    cl:subscribe { topic = "home/#", qos = 1 }
    cosock.spawn(function()
      cosock.socket.sleep(0.05)
      driver_say("disconnect", client2:disconnect())
    end, "settings changed")
  end)
  driver_say("run_sync 2", mqtt.run_sync(client2))
  done.driver = true
end)

H.watchdog(3, function() return done.broker and done.driver end,
  function() H.flush("broker", "driver") end)
H.run()
