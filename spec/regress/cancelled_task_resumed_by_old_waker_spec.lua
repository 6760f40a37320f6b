-- Regression: in cosock 0.2.0 (Lua 5.3) a cancelled task was resumed again when an
-- object it had waited on later called its old waker. Cancelled means never resumed.

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: cancelled task resumed by an old waker", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("a task cancelled while receiving on a channel stays dead when a message comes", function()
    local resumed = false
    local later
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      local victim = cosock.spawn(function()
        rx:receive()
        resumed = true
      end, "victim")
      socket.sleep(0)
      victim:cancel()
      -- nothing waits on the channel any more (its receive left a ticket, not
      -- a waker function: the ticket is stale now and wakes nobody)
      assert.is_false(require("cosock.core").channel_waiting(rx.link))
      tx:send("x")
      socket.sleep(0.01)
      later = rx:receive()         -- the message is still there for others
    end, "driver")
    net.run()
    assert.is_false(resumed)
    assert.equal("x", later)
  end)

  it("a task cancelled while receiving on a socket stays dead when data comes", function()
    local resumed = false
    local later
    cosock.spawn(function()
      local c, s = net.pair()
      local victim = cosock.spawn(function()
        c:receive()
        resumed = true
      end, "victim")
      socket.sleep(0)
      victim:cancel()
      assert(s:send("data\n"))
      socket.sleep(0.01)
      later = c:receive()
      c:close(); s:close()
    end, "driver")
    net.run()
    assert.is_false(resumed)
    assert.equal("data", later)
  end)
end)
