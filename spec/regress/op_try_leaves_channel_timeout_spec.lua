-- Regression: a perform's try set a channel end's timeout to 0 and put it back
-- unprotected: after an error in between (the watchdog's interrupt, memory),
-- a plain send on that bounded channel returned nil, "timeout" at once, for
-- good. The tries no longer touch the ends' timeouts.

local cosock = require "cosock"
local op = require "cosock.op"
local interrupt = require "spec.support.interrupt"
local net = require "spec.support.net"

describe("regress: an error during a perform's try", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("leaves the sender's and the receiver's timeouts as they were", function()
    for _, n in ipairs { 1, 2, 3, 5, 8, 13, 21, 34, 55, 89 } do
      local r
      cosock.reset()
      cosock.spawn(function()
        local tx, rx = cosock.channel.new(1)
        rx:settimeout(5)
        interrupt.pcall(n, function()
          return op.choice(op.send(tx, "a"), op.recv(rx), op.always("none")):perform()
        end)
        interrupt.pcall(n, function() return op.choice(op.recv(rx), op.always("none")):perform() end)
        r = { rawget(tx, "timeout"), rawget(rx, "timeout") }
        while #rx.link.queue > 0 do rx:receive() end -- (empty it)
        r.send = { tx:send("b") }
      end, "performer")
      net.run()
      assert.same({ nil, 5, send = { true } }, r, "n = " .. n)
    end
  end)
end)
