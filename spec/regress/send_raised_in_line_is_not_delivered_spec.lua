-- Regression: a send that raised after it had joined a rendezvous line (its
-- wake of the receiver failed part-way) stayed in line, and a receiver took
-- it later: a message delivered although its send reported failure. Now a
-- send that raises has sent nothing; one that returned true is received
-- exactly once.

local cosock = require "cosock"
local op = require "cosock.op"
local interrupt = require "spec.support.interrupt"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: a rendezvous send that raised", function()
  after_each(function() net.check_clean() end)

  it("is never received; the sends that returned true are received once", function()
    for _, n in ipairs { 1, 3, 10, 30, 60, 100, 200, 400 } do
      cosock.reset()
      local tx, rx = cosock.channel.new(0)
      local outcome, got = {}, {}
      for i = 1, 4 do
        cosock.spawn(function()
          for _ = 1, 3 do
            local v = op.recv(rx):perform()
            if v == nil then return end
            got[v] = (got[v] or 0) + 1
          end
        end, "receiver " .. i)
      end
      cosock.spawn(function()
        socket.sleep(0)
        outcome[1] = interrupt.pcall(n, function() return tx:send(1) end) and "sent" or "raised"
        for i = 2, 4 do outcome[i] = tx:send(i) and "sent" or "failed" end
        tx:close()
      end, "sender")
      net.run()
      for i = 1, 4 do
        local want = outcome[i] == "sent" and 1 or nil
        assert.equal(want, got[i], ("n = %d, message %d (%s)"):format(n, i, tostring(outcome[i])))
      end
    end
  end)
end)
