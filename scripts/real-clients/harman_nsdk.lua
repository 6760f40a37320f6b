-- harman_nsdk: the Harman Luxury driver's nSDK HTTP client (drivers/
-- SmartThings/harman-luxury/src/api/nsdk.lua, unchanged), which sends its
-- requests with cosock.asyncify "socket.http" and sets http.TIMEOUT on the
-- module asyncify returned (the case shortens the driver's 5 s in its
-- constants table before the client loads). The server, one request per
-- connection as LuaSocket's http makes them: a GetData answer, a SetData
-- answer, a 500 with the device's error object, a body written in pieces
-- with pauses shorter than the timeout, a body that stops half-way for longer
-- than the timeout (a timeout in the middle of the message), a connection
-- closed in the middle of the headers, and a refused connection.
-- needs: edge neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/harman-luxury/src")
H.use("neturl", "lib")
local cosock = require "cosock"
local socket = require "cosock.socket"
local const = require "constants"
const.HTTP_TIMEOUT = 0.3
local NSDK = require "api.nsdk"
local st_utils = require "st.utils"

local srv, port = H.listen()
local ip = "127.0.0.1:" .. port
local done = false

local function head(status, len)
  return string.format("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
    .. "Connection: close\r\n\r\n", status, len)
end

local replies = {
  function(c) local b = '[{"type":"string_","string_":"Living room"}]'; c:send(head("200 OK", #b) .. b) end,
  function(c) local b = '{"ok":true}'; c:send(head("200 OK", #b) .. b) end,
  function(c)
    local b = '{"error":{"message":"path not found"}}'
    c:send(head("500 Internal Server Error", #b) .. b)
  end,
  function(c)
    local b = '[{"type":"i32_","i32_":42,"unit":"percent"}]'
    c:send(head("200 OK", #b))
    for i = 1, #b, 10 do c:send(b:sub(i, i + 9)); socket.sleep(0.03) end
  end,
  function(c)
    local b = '[{"type":"i32_","i32_":7}]'
    c:send(head("200 OK", #b) .. b:sub(1, 10))
    socket.sleep(1)
  end,
  function(c) c:send("HTTP/1.1 200 OK\r\nContent-Ty") end,
}

-- Each connection in a task of its own, so that a stalled reply holds up
-- nothing else.
H.task("nsdk server", function()
  srv:settimeout(3)
  local left = #replies
  for _, reply in ipairs(replies) do
    local c = assert(srv:accept())
    c:settimeout(3)
    local req = H.read_request(c)
    H.say("server: " .. (req.line or "nil"):gsub("%%22", '"'):match("^%S+ (%S+)"))
    H.task("connection", function()
      reply(c)
      c:close()
      left = left - 1
    end)
  end
  srv:close()
  while left > 0 do socket.sleep(0.05) end
  done = true
end)

-- Each call as the hub calls a capability handler: an error it raises is
-- caught (and logged) and the driver goes on.
local function show(label, fn, arg)
  local ok, v, err = pcall(fn, arg)
  if not ok then return H.say(label, "handler raised: " .. H.first_line(v)) end
  H.say(label, type(v) == "table" and st_utils.stringify_table(v) or tostring(v),
    type(err) == "table" and st_utils.stringify_table(err) or err)
end

H.task("driver", function()
  show("GetData", NSDK.GetData, { ip = ip, path = "settings:/deviceName" })
  show("SetData", NSDK.SetData, { ip = ip, path = "player:volume", value = { i32_ = 30 } })
  show("GetData 500", NSDK.GetData, { ip = ip, path = "settings:/nothing" })
  show("GetData pieces", NSDK.GetData, { ip = ip, path = "player:volume" })
  show("GetData stalled", NSDK.GetData, { ip = ip, path = "player:mute" })
  show("GetData cut", NSDK.GetData, { ip = ip, path = "player:power" })
  while not done do socket.sleep(0.05) end
  show("GetData refused", NSDK.GetData, { ip = ip, path = "player:power" })
  show("GetData bad ip", NSDK.GetData, { ip = "300.1.1.1", path = "x" })
end)
H.run()
