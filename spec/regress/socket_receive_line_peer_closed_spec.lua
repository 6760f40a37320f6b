-- A line receive whose peer closed with nothing left to read: the fast path
-- (src/features/luasocket_tcp.c) now says "closed" from its own recv()
-- instead of handing over to LuaSocket's receive for a second recv(). The
-- results must stay LuaSocket's: nil, "closed", and the prefix (or "") as the
-- partial result, whether the close came before the call or during its wait.

local cosock = require "cosock"
local net = require "spec.support.net"

describe("receive('*l') when the peer closed and nothing is buffered", function()
  after_each(net.check_clean)

  it("returns nil, 'closed', '' (and the prefix as the partial result)", function()
    local r = net.in_task(function()
      local c, s = net.pair()
      s:close()
      local first = net.pack(c:receive("*l"))
      local again = net.pack(c:receive("*l", "pre"))
      local default = net.pack(c:receive())
      c:close()
      return first, again, default
    end)
    assert.same({ n = 3, nil, "closed", "" }, r[1])
    assert.same({ n = 3, nil, "closed", "pre" }, r[2])
    assert.same({ n = 3, nil, "closed", "" }, r[3])
  end)

  it("ends a waiting receive with nil, 'closed' after the lines before it", function()
    local r = net.in_task(function()
      local c, s = net.pair()
      cosock.spawn(function()
        cosock.socket.sleep(0.02)
        s:send("last\n")
        s:close()
      end, "closer")
      local got = { net.pack(c:receive("*l")), net.pack(c:receive("*l", "x")) }
      c:close()
      return got
    end)
    assert.same({ n = 1, "last" }, r[1][1])
    assert.same({ n = 3, nil, "closed", "x" }, r[1][2])
  end)
end)
