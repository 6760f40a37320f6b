-- Regression: in cosock 0.2.0 a receive that timed out after partial data returned
-- the last chunk twice in the partial result. cosock-native returns each byte once.

local cosock = require "cosock"
local net = require "spec.support.net"

local pack = net.pack

describe("regress: receive timeout duplicates the last chunk", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  for _, pattern in ipairs { "*l", 100, "*a" } do
    it("partial data of a timed-out receive(" .. tostring(pattern) .. ") holds each byte once", function()
      local r
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(0.3)
        cosock.spawn(function()
          assert(s:send("ab"))
          cosock.socket.sleep(0.01)
          assert(s:send("cd"))
          cosock.socket.sleep(0.01)
          assert(s:send("ef"))
        end, "writer")
        r = pack(c:receive(pattern, "<"))
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "timeout", "<abcdef" }, r)
    end)
  end
end)
