-- Regression (issue 21): cosock 0.2.0's socket.bind set reuseaddr after
-- listen, where it does nothing: a server restarted while a connection of the
-- old one was in TIME_WAIT could not bind its port for a minute. cosock.socket.bind
-- sets it before bind, as LuaSocket's socket.bind does.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: socket.bind sets reuseaddr after listen", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("binds the port again while the old server's connection is in TIME_WAIT", function()
    local r = {}
    cosock.spawn(function()
      local srv = assert(socket.bind("127.0.0.1", 0))
      srv:settimeout(net.TIMEOUT)
      local _, port = srv:getsockname()
      local c = assert(socket.tcp())
      c:settimeout(net.TIMEOUT)
      assert(c:connect("127.0.0.1", port))
      local s = assert(srv:accept())
      s:close()                    -- the server closes first: its side goes to TIME_WAIT
      assert.equal("closed", select(2, c:receive()))
      c:close()
      srv:close()
      local again, err = socket.bind("127.0.0.1", port)
      r.err = err
      r.bound = again ~= nil
      if again then again:close() end
    end, "server")
    net.run()
    assert.is_nil(r.err)
    assert.is_true(r.bound)
  end)
end)
