-- Regression: cosock.stop() called while the loop parks a task (from the
-- setwaker of the object the task waits on, or a finalizer that runs then)
-- could not cancel that task: stop raised "cosock: cannot cancel a task
-- while the loop is parking it" and left it parked, so run ended in the
-- stall error instead of returning. stop now cancels every other task at
-- once and that one in the next pass (the task "cosock.stop" it spawns), and
-- raises nothing for it.

local cosock = require "cosock"

describe("regress: cosock.stop() while the loop parks a task", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("from the setwaker of the object the task parks on: run returns, every task cancelled", function()
    local o, outcome, calls = {}, nil, 0
    function o.setwaker(_, _, waker)
      calls = calls + 1
      if waker and outcome == nil then outcome = { pcall(cosock.stop) } end
    end
    local parker = cosock.spawn(function() coroutine.yield({ o }, nil, nil) end, "parker")
    local other = cosock.spawn(function()
      local _, rx = cosock.channel.new()
      rx:receive()
    end, "other")
    cosock.run()                               -- (it raised the stall error)
    assert.are.same({ true }, outcome)
    assert.is_false(parker:is_alive())
    assert.is_false(other:is_alive())
    assert.are.equal(2, calls)                 -- (its waker set, then withdrawn by the cancel)
    assert.are.equal(0, cosock.stats().tasks)
  end)

  it("an error of another task's cancel is still raised, after every task was cancelled", function()
    local o, bad, outcome = {}, {}, nil
    function o.setwaker(_, _, waker)
      if waker and outcome == nil then outcome = { pcall(cosock.stop) } end
    end
    function bad.setwaker(_, _, waker)
      if not waker then error("setwaker refused") end
    end
    local victim = cosock.spawn(function() coroutine.yield({ bad }, nil, nil) end, "victim")
    cosock.spawn(function()
      cosock.socket.sleep(0)                   -- (the victim is parked by then)
      coroutine.yield({ o }, nil, nil)
    end, "parker")
    cosock.run()
    assert.is_false(outcome[1])
    assert.matches("setwaker refused", outcome[2])
    assert.is_false(victim:is_alive())
    assert.are.equal(0, cosock.stats().tasks)
  end)
end)
