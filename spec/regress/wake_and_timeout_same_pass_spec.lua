-- Regression: in cosock 0.2.0, when a wake and an expired timeout landed in the
-- same pass, the task got both: ({obj}, nil, "timeout"). cosock-native delivers one.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("regress: wake and timeout in the same pass", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a channel woken in the pass its zero timeout expires gives one result", function()
    local results = {}
    for round = 1, 20 do
      cosock.spawn(function()
        local tx, rx = cosock.channel.new()
        cosock.spawn(function() tx:send(round) end, "sender")
        results[round] = pack(socket.select({ rx }, nil, 0))
      end, "selector " .. round)
    end
    net.run()
    for round = 1, 20 do
      local r = results[round]
      assert.equal(3, r.n)
      assert.is_false(r[1] ~= nil and r[3] ~= nil, "got both a wake and a timeout")
      assert.is_true(r[1] ~= nil or r[3] == "timeout")
    end
  end)

  it("receive returns the message or a timeout, never loses the message", function()
    local r = {}
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      rx:settimeout(0.001)
      cosock.spawn(function() socket.sleep(0.001); tx:send("m") end, "sender")
      r.first = pack(rx:receive())
      rx:settimeout(net.TIMEOUT)
      if r.first[1] == nil then r.second = pack(rx:receive()) end
    end, "receiver")
    net.run()
    local msg = r.first[1] or (r.second and r.second[1])
    assert.equal("m", msg)
  end)
end)
