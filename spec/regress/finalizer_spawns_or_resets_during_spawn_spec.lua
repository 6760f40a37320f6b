-- Regression: the collector may run finalizers inside any allocation of
-- cosock.spawn. spawn reserved a free slot, then allocated (the handle, the
-- coroutine's key), then took the slot it had reserved: a finalizer that
-- spawned in between took that slot first (a heap-buffer-overflow in
-- cn_task_new, a segfault in a plain build); one that reset the loop freed
-- the slot arrays under it. spawn now claims a slot and the coroutine's key
-- until both hold at once, and nothing allocates after that.

local cosock = require "cosock"
local V = require "spec.support.version"

describe("regress: a finalizer that spawns or resets while spawn runs", function()
  before_each(function() cosock.reset() end)

  -- The collector runs when it likes: each case goes on until enough
  -- finalizers ran (the loop is drained now and then, which keeps the heap
  -- small and lets finalizers run inside run's allocations too).
  it("spawn from a finalizer inside spawn: every task is made once and runs once", function()
    local made, ran, inner, i = 0, 0, 0, 0
    local function body() ran = ran + 1 end
    while inner < 200 and i < 400000 do
      i = i + 1
      V.garbage(function()
        cosock.spawn(body)
        made = made + 1
        inner = inner + 1
      end)
      cosock.spawn(body)
      made = made + 1
      if i % 1000 == 0 then cosock.run() end
    end
    assert.is_true(inner >= 200)
    collectgarbage()
    collectgarbage()                           -- every finalizer has run
    cosock.run()
    assert.are.equal(made, ran)
    assert.are.equal(0, require("cosock.core").stats().tasks)
  end)

  it("reset from a finalizer inside spawn: the spawn still makes its task, after the reset", function()
    local on, resets, ran, i = true, 0, 0, 0
    while resets < 200 and i < 400000 do
      i = i + 1
      V.garbage(function()
        if on then
          cosock.reset()
          resets = resets + 1
        end
      end)
      cosock.spawn(function() ran = ran + 1 end)
    end
    on = false
    assert.is_true(resets >= 200)
    collectgarbage()
    collectgarbage()
    local tasks = require("cosock.core").stats().tasks
    assert.is_true(tasks > 0)
    cosock.run()
    assert.are.equal(tasks, ran)               -- each task the loop holds runs once
    assert.are.equal(0, require("cosock.core").stats().tasks)
  end)

  it("a spawn whose own allocations reset the loop keeps its task", function()
    -- Every allocation of this spawn may run the finalizer: whichever one
    -- does, the task spawn returns is alive afterwards.
    for _ = 1, 2000 do
      local armed = true
      V.garbage(function()
        if armed then armed = false; cosock.reset() end
      end)
      local h = cosock.spawn(function() end)
      local alive = h:is_alive()               -- (before assert's own allocations)
      if not alive then assert.is_true(alive) end
    end
    collectgarbage()
    cosock.run()
    assert.are.equal(0, require("cosock.core").stats().tasks)
  end)
end)
