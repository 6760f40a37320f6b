-- Regression (issue 21): cosock 0.2.0's protect turned a failed try into a
-- lone nil, dropping its message, so cosock.socket.http.request to a refused
-- port returned just nil. cosock-native's protect returns nil and the message,
-- as LuaSocket's protect does.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("regress: protect drops the message of a failed try", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("gives nil and the message", function()
    assert.same({ n = 2, nil, "refused" }, pack(socket.protect(function() socket.try(nil, "refused") end)()))
  end)

  it("so a refused http.request says why", function()
    local r
    cosock.spawn(function()
      r = pack(cosock.socket.http.request("http://127.0.0.1:" .. net.dead_port() .. "/"))
    end, "client")
    net.run()
    assert.same({ n = 2, nil, "connection refused" }, r)
  end)
end)
