-- needs: luamqtt (--luamqtt DIR: a checkout of xHasKx/luamqtt) and mosquitto
-- luamqtt's copas connector (mqtt.luasocket-copas), unchanged, as its
-- examples/copas.lua uses it: two clients in copas threads (mqtt.run_sync)
-- against a local mosquitto; "pong" subscribes, "ping" publishes COUNT
-- messages at qos 1 and then "done"; both disconnect. Prints what each saw.
local copas = require "copas"
local mqtt = require "mqtt"

local URI = "127.0.0.1:" .. (os.getenv("CC_PORT") or "48793")
local COUNT = 5
local topic = "copas-clients/ping"
local lines = {}
local function say(s) lines[#lines + 1] = s end

local pong = mqtt.client { uri = URI, clean = true, connector = require("mqtt.luasocket-copas") }
local ping = mqtt.client { uri = URI, clean = true, connector = require("mqtt.luasocket-copas") }
local subscribed = false

pong:on {
  connect = function(connack)
    say("pong connected: " .. tostring(connack.rc))
    assert(pong:subscribe { topic = topic, qos = 1, callback = function()
      say("pong subscribed")
      subscribed = true
    end })
  end,
  message = function(msg)
    assert(pong:acknowledge(msg))
    say("pong received " .. msg.payload)
    if msg.payload == "done" then assert(pong:disconnect()) end
  end,
  error = function(err) say("pong error: " .. tostring(err)) end,
}

ping:on {
  connect = function(connack)
    say("ping connected: " .. tostring(connack.rc))
    copas.addthread(function()
      while not subscribed do copas.sleep(0.01) end
      for i = 1, COUNT do
        assert(ping:publish { topic = topic, payload = "ping " .. i, qos = 1 })
        copas.sleep(0.01)
      end
      assert(ping:publish { topic = topic, payload = "done", qos = 1 })
      copas.sleep(0.05)
      assert(ping:disconnect())
    end)
  end,
  error = function(err) say("ping error: " .. tostring(err)) end,
}

copas.addthread(function() mqtt.run_sync(pong) end)
copas.addthread(function() copas.sleep(0.05); mqtt.run_sync(ping) end)
copas.loop()
table.sort(lines)
for _, l in ipairs(lines) do print(l) end
print("loop ended")
