-- Regression: cosock 0.2.0's send, after a partial write, started again from the
-- first byte, so a send larger than the socket buffer never finished and the peer
-- received duplicated data. cosock-native sends the rest.

local cosock = require "cosock"
local net = require "spec.support.net"

describe("regress: send restarts from the first byte", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a send larger than the socket buffers reaches a slow reader exactly once, in order", function()
    local data = net.pattern(4 * 1024 * 1024)
    local got, sent = {}, nil
    cosock.spawn(function()
      local c, s = net.pair()
      assert(s:setoption("tcp-nodelay", true))
      cosock.spawn(function()
        -- a slow reader: small pieces with a pass between them
        while true do
          local chunk, err, partial = s:receive(65536)
          chunk = chunk or partial
          if chunk and #chunk > 0 then got[#got + 1] = chunk end
          if err then break end
          cosock.socket.sleep(0)
        end
        s:close()
      end, "slow reader")
      sent = c:send(data)
      c:close()
    end, "writer")
    net.run()
    local all = table.concat(got)
    assert.equal(#data, sent)
    assert.equal(#data, #all)
    assert.is_true(all == data, "peer received different bytes than were sent")
  end)
end)
