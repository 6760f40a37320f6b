-- Regression (footprint merge): a handle maps to its task's slot while the
-- task lives. cosock.stop makes a new handle for a task whose handle the
-- program dropped (and the collector took); that handle mapped only to the
-- coroutine, so it read as a dead task: stop cancelled nothing there and run
-- never returned (examples/many_cores.lua's workers after 20 connections).

local cosock = require "cosock"
local core = require "cosock.core"

describe("regress: stop and a task whose handle was dropped", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("the handle task_handles makes for it is the live task's", function()
    local _, never = cosock.channel.new()
    cosock.spawn(function() never:receive() end, "parked")
    collectgarbage("collect")
    collectgarbage("collect")
    local hs = core.task_handles()
    assert.equal(1, #hs)
    assert.equal("parked", hs[1].name)
    assert.is_true(hs[1]:is_alive())
    hs[1]:cancel()
    assert.is_false(hs[1]:is_alive())
    assert.equal(0, cosock.stats().tasks)
  end)

  it("stop ends it, so run returns", function()
    local ended, keep = {}, {}
    for i = 1, 3 do
      local tx, rx = cosock.channel.new()
      keep[i] = tx                  -- (a sender kept: the receive is no stall)
      cosock.spawn(function() rx:receive() end, "parked " .. i)
    end
    collectgarbage("collect")
    collectgarbage("collect")
    cosock.spawn(function()
      cosock.socket.sleep(0)
      ended.stopper = true
      cosock.stop()
    end, "stopper")
    cosock.run()                    -- (a task left parked would stall run: an error)
    assert.is_true(ended.stopper)
    assert.equal(0, cosock.stats().tasks)
  end)
end)
