-- Regression: a task cancelled while a guard (after a with_nack in the same
-- perform) waited never fired that with_nack's nack: the perform had made the
-- nack, and nothing told it the perform was over.

local cosock = require "cosock"
local op = require "cosock.op"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: a nack when the task is cancelled in a later guard", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("fires the nack of the with_nack made before the guard that waits", function()
    local nack, fired
    local h = cosock.spawn(function()
      op.choice(
        op.with_nack(function(n) nack = n; return op.never() end),
        op.guard(function() socket.sleep(10); return op.never() end)
      ):perform()
    end, "performer")
    cosock.spawn(function()
      socket.sleep(0.01)
      h:cancel()
      fired = op.choice(nack, op.always(false)):perform()
    end, "canceller")
    net.run()
    assert.is_nil(fired) -- the nack's wait_op gives no values; always(false) would give false
  end)

  it("a guard that waits and returns still makes a perform that completes", function()
    local r
    cosock.spawn(function()
      r = op.choice(
        op.with_nack(function() return op.never() end),
        op.guard(function() socket.sleep(0.01); return op.always("guarded") end)
      ):perform()
    end, "performer")
    net.run()
    assert.equal("guarded", r)
  end)
end)
