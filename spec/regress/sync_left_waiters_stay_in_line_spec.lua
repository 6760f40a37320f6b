-- Issue 35, item 8: acquire(t) calls that timed out and acquire_ops whose
-- choice chose another operation stayed in the lock's line until the next
-- release (holding their tasks; tostring counted them as waiting). They
-- leave the line when they leave.

local cosock = require "cosock"
local sync = require "cosock.sync"
local op = require "cosock.op"
local net = require "spec.support.net"

local function live(weak)
  collectgarbage()
  collectgarbage()
  local n = 0
  for _ in pairs(weak) do n = n + 1 end
  return n
end

describe("regress: cosock.sync waiters that left", function()
  before_each(function() cosock.reset() end)

  for _, kind in ipairs({ "lock", "semaphore" }) do
    it("leave the " .. kind .. "'s line at once (timed out, or a choice that chose another operation)", function()
      local sem = kind == "lock" and sync.lock() or sync.semaphore(1)
      local cos = setmetatable({}, { __mode = "k" })
      local N = 20
      local r = net.in_task(function()
        assert(sem:acquire())
        local tx, rx = cosock.channel.new()
        for i = 1, N do
          cosock.spawn(function()
            cos[coroutine.running()] = true
            tx:send(sem:acquire(0.001))
          end, "timed out " .. i)
          cosock.spawn(function()
            cos[coroutine.running()] = true
            tx:send(op.choice(sem:acquire_op(), op.sleep(0.001):wrap(function() return "slept" end)):perform())
          end, "lost choice " .. i)
        end
        local got = {}
        for _ = 1, 2 * N do
          local v = rx:receive()
          got[tostring(v)] = (got[tostring(v)] or 0) + 1
        end
        cosock.socket.sleep(0) -- (the tasks end)
        local text, left = tostring(sem), live(cos)
        sem:release()
        return got, text, left
      end)
      assert.same({ ["nil"] = N, slept = N }, r[1])
      assert.equal(("cosock.sync.%s (1 of 1 held by 1 task, 0 waiting)"):format(kind), r[2])
      assert.equal(0, r[3], "tasks kept alive by the line")
      net.assert_clean()
    end)
  end

  it("a line of many lost choices stays small (amortised drop of the waiters that left)", function()
    local lock = sync.lock()
    local r = net.in_task(function()
      local tx, rx = cosock.channel.new()
      local holder = cosock.spawn(function() assert(lock:acquire()); rx:receive(); lock:release() end, "holder")
      cosock.socket.sleep(0)
      collectgarbage()
      local before = collectgarbage("count")
      for _ = 1, 500 do -- (each waits a pass in line, then its sleep wins)
        assert.equal("x", op.choice(lock:acquire_op(), op.sleep(1e-6):wrap(function() return "x" end)):perform())
      end
      collectgarbage()
      local grew = collectgarbage("count") - before
      local text = tostring(lock)
      tx:send("done")
      holder:join()
      return grew, text
    end)
    assert.is_true(r[1] < 100, -- (before the fix: 1.2 MB)
      ("the line kept %.0f KB"):format(r[1]))
    assert.equal("cosock.sync.lock (1 of 1 held by 1 task, 0 waiting)", r[2])
  end)
end)
