-- Regression: cosock 0.2.0's receive(n, prefix) counted the prefix or not
-- depending on whether it had to wait. cosock-native follows LuaSocket: the count
-- includes the prefix, the result is prefix .. (n - #prefix) bytes, either way.

local cosock = require "cosock"
local net = require "spec.support.net"

describe("regress: receive(n, prefix) count depends on waiting", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("gives the same result with and without a wait", function()
    local r = {}
    cosock.spawn(function()
      local c, s = net.pair()
      assert(s:send("123"))
      cosock.socket.sleep(0.01)
      r.no_wait = c:receive(5, "ab")          -- "123" already there
      cosock.spawn(function() net.trickle(s, "456") end, "trickler")
      r.waited = c:receive(5, "ab")           -- "456" arrives byte by byte
      c:close(); s:close()
    end, "reader")
    net.run()
    assert.equal("ab123", r.no_wait)
    assert.equal("ab456", r.waited)
  end)

  it("agrees with LuaSocket's own receive on the same input", function()
    local luasocket = require "socket"
    local srv = assert(luasocket.bind("127.0.0.1", 0))
    local _, port = srv:getsockname()
    local c = assert(luasocket.connect("127.0.0.1", port))
    local a = assert(srv:accept())
    c:settimeout(net.TIMEOUT)
    assert(a:send("wxyz"))
    local plain = c:receive(3, "p")
    c:close(); a:close(); srv:close()

    local ours
    cosock.spawn(function()
      local cc, ss = net.pair()
      cosock.spawn(function() net.trickle(ss, "wxyz") end, "trickler")
      ours = cc:receive(3, "p")
      cosock.socket.sleep(0.01)
      cc:close(); ss:close()
    end, "reader")
    net.run()
    assert.equal(plain, ours)
  end)
end)
