-- Regression (issue 35): a task that waited in select on a udp socket which
-- had not sent anything yet was never woken. LuaSocket makes a udp socket's
-- descriptor at its first sendto (or setsockname/setpeername), so getfd()
-- was -1 when the wait began, and the loop took the wait for one on a
-- closed socket for good; cosock 0.2.0 hands the socket to LuaSocket's
-- select on every pass, which reads getfd() again. Deployed discovery code
-- (SSDP/mDNS) selects on the socket before another task sends the query.

local cosock = require "cosock"
local net = require "spec.support.net"
local rawsocket = require "socket"

local socket = cosock.socket

describe("regress: select on a udp socket before its first sendto", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("wakes when another task's sendto makes the socket and the peer answers", function()
    local peer = assert(rawsocket.udp())
    assert(peer:setsockname("127.0.0.1", 0))
    local ip, port = peer:getsockname()
    local u = assert(socket.udp())
    local r
    cosock.spawn(function()
      -- (2 s is reached only with the bug: then the select times out)
      local ready, _, err = socket.select({ u }, nil, 2)
      r = { ready = ready and #ready, err = err, data = ready and u:receive() }
    end, "listener")
    cosock.spawn(function()
      assert(u:sendto("M-SEARCH", ip, tonumber(port)))
      peer:settimeout(2)
      local d, from, fport = peer:receivefrom()
      assert.equal("M-SEARCH", d)
      peer:sendto("HTTP/1.1 200 OK", from, fport)
    end, "query")
    net.run()
    peer:close()
    u:close()
    assert.same({ ready = 1, data = "HTTP/1.1 200 OK" }, r)
  end)
end)
