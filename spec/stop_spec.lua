-- cosock.stop(): every task cancelled (handle:cancel's path) so that run
-- returns; from a task, the others at once and the caller at its next wait.

local cosock = require "cosock"
local L = require "spec.support.loop"
local socket = cosock.socket

describe("cosock.stop", function()
  before_each(function()
    cosock.reset()
  end)

  it("does nothing when no task is there", function()
    cosock.stop()
    assert.is_false(cosock.step())
  end)

  it("from outside a task, cancels every task: handles say so and nothing is left", function()
    local h1 = cosock.spawn(function() socket.sleep(100) end, "a")
    cosock.spawn(function() socket.sleep(100) end, "b (handle dropped)")
    local tx, rx = cosock.channel.new()
    local h3 = cosock.spawn(function() rx:receive() end, "c")
    assert.is_true(cosock.step())
    cosock.stop()
    assert.is_false(h1:is_alive())
    assert.is_false(h3:is_alive())
    assert.is_false(cosock.step())
    L.assert_clean()
    tx:close()
  end)

  it("from a task, makes run return: the others never run again, the caller ends at its next wait", function()
    local log = {}
    for i = 1, 3 do
      cosock.spawn(function()
        socket.sleep(0.001 * i)
        log[#log + 1] = "sleeper " .. i .. " woke"
      end, "sleeper " .. i)
    end
    local late
    cosock.spawn(function()
      cosock.stop()
      log[#log + 1] = "caller goes on until it waits"
      late = cosock.spawn(function() log[#log + 1] = "spawned after stop ran" end, "late")
      socket.sleep(100)
      log[#log + 1] = "caller woke"
    end, "stopper")
    cosock.run()
    assert.same({ "caller goes on until it waits" }, log)
    assert.is_false(late:is_alive())
    L.assert_clean()
  end)

  it("from a task that then returns, makes run return", function()
    cosock.spawn(function() socket.sleep(100) end, "sleeper")
    cosock.spawn(function() socket.sleep(0); cosock.stop() end, "stopper")
    cosock.run()
    L.assert_clean()
  end)

  it("tells the joiners: a join on a stopped task gives nil, 'cancelled'", function()
    local h = cosock.spawn(function() socket.sleep(100) end, "sleeper")
    cosock.step()
    cosock.stop()
    local r
    cosock.spawn(function() r = { h:join(1) } end)
    cosock.run()
    assert.same({ nil, "cancelled" }, r)
  end)

  it("cancels every task even when one cancel raises, then raises that error", function()
    local bad = L.obj("bad")
    local ha = cosock.spawn(function() L.yield({ bad }) end, "a")
    local hb = cosock.spawn(function() socket.sleep(100) end, "b")
    assert.is_true(cosock.step())
    bad.opts.raise = "setwaker refused"
    assert.has_error(function() cosock.stop() end, "setwaker refused")
    assert.is_false(ha:is_alive())
    assert.is_false(hb:is_alive())
    assert.is_false(cosock.step())
  end)
end)
