-- wemo: the Wemo driver's subscription server (drivers/SmartThings/wemo/src/
-- subscription_server.lua, unchanged). A local "device" posts two NOTIFY
-- requests to it (one for an unknown subscription, one for a subscription
-- whose device was deleted) and reads the replies; then the driver code calls
-- shutdown(), whose control task closes the listening socket while the
-- server's task waits in accept() with no timeout, as on a hub.
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("edge", "drivers/SmartThings/wemo/src")
H.use("luncheon")
H.use("neturl", "lib")
local cosock = require "cosock"
local SubscriptionServer = require "subscription_server"

local server = SubscriptionServer.new_server()
local _, port = server.sock:getsockname()
server.subscriptions["uuid:deleted"] = { id = "d1" } -- a device whose label is gone

local function notify(sid)
  local c = assert(cosock.socket.tcp())
  c:settimeout(5)
  assert(c:connect("127.0.0.1", port))
  local body = "<e:propertyset><BinaryState>1</BinaryState></e:propertyset>"
  assert(c:send(string.format("NOTIFY / HTTP/1.1\r\nHOST: 127.0.0.1:%d\r\nSID: %s\r\n"
    .. "Content-Length: %d\r\n\r\n%s", port, sid, #body, body)))
  local reply, err, partial = c:receive("*a")
  c:close()
  -- Printed after a pause: the server's notification task logs in the same
  -- pass as this reply arrives, in an order cosock leaves open.
  cosock.socket.sleep(0.1)
  H.say("device: reply to " .. sid, ((reply or partial or ""):match("^[^\r\n]*")), err)
end

H.task("device", function()
  notify("uuid:unknown")
  notify("uuid:deleted")
  H.say("driver: shutdown()")
  server:shutdown()
  cosock.socket.sleep(0.5)
  H.say("driver: server.sock", server.sock)
end)
H.run()
