-- The arguments of a signal are the woken task's once it ran: the signal
-- module keeps no reference to them (a waiter's node is reused for its next
-- wait, and must not hold the last signal's values until then).

local cosock = require "cosock"
local signal = require "cosock.signal"
local net = require "spec.support.net"

describe("signal arguments", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  for _, how in ipairs({ "all", "one" }) do
    it("are not kept alive by signal." .. how .. " once the woken task ran", function()
      local weak = setmetatable({}, { __mode = "v" })
      local seen
      cosock.spawn(function()
        seen = select(2, signal.wait("x")) ~= nil -- (no local keeps it)
        signal.wait("x", 0.05)                 -- waits again: its node is in use
      end, "waiter")
      cosock.spawn(function()
        cosock.socket.sleep(0)
        local big = {}
        weak[1] = big
        assert.equal(1, signal[how]("x", big))
        big = nil -- luacheck: ignore
        cosock.socket.sleep(0.01)              -- the waiter ran and waits again
        collectgarbage()
        collectgarbage()
      end, "signaller")
      net.run()
      assert.is_true(seen)
      assert.is_nil(weak[1])
    end)
  end
end)
