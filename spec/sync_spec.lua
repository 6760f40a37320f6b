-- cosock.sync: locks and semaphores (doc/reference.md#module-cosocksync).
-- One test per sentence of the contract. (Not in cosock 0.2.0: an addition.)

local cosock = require "cosock"
local sync = require "cosock.sync"
local scope = require "cosock.scope"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local pack = compat.pack
local pcall = compat.pcall -- (a pcall a task may wait in, on Lua 5.1 too)
local sleep = cosock.socket.sleep

describe("cosock.sync", function()
  before_each(function() cosock.reset() end)
  net.virtual_clock_each() -- (sleeps order the tasks: on the simulation's clock)

  it("is cosock.sync, loaded on first use", function()
    assert.equal(sync, cosock.sync)
  end)

  it("a lock is held by one task at a time; waiters get it in the order they asked", function()
    local lock, order, inside = sync.lock(), {}, 0
    for i = 1, 4 do
      cosock.spawn(function()
        sleep(0.001 * i) -- asks in order 1, 2, 3, 4
        assert(lock:acquire())
        inside = inside + 1
        assert(inside == 1, "two holders")
        order[#order + 1] = i
        sleep(0.005)
        inside = inside - 1
        lock:release()
      end, "t" .. i)
    end
    net.run()
    assert.same({ 1, 2, 3, 4 }, order)
    assert.equal(1, lock:available())
    net.assert_clean()
  end)

  it("acquire(timeout) returns nil, \"timeout\" and leaves the line", function()
    local lock = sync.lock()
    local r = net.in_task(function()
      assert(lock:acquire())
      local got
      local h = cosock.spawn(function() got = pack(lock:acquire(0.01)) end)
      h:join()
      lock:release()
      return got, lock:available(), tostring(lock)
    end)
    assert.same(pack(nil, "timeout"), r[1])
    assert.equal(1, r[2])
    assert.equal("cosock.sync.lock (0 of 1 held by 0 tasks, 0 waiting)", r[3])
  end)

  it("a semaphore(n) lets n tasks hold it at once", function()
    local sem, most, inside = sync.semaphore(2), 0, 0
    for i = 1, 5 do
      cosock.spawn(function()
        assert(sem:acquire())
        inside = inside + 1
        if inside > most then most = inside end
        sleep(0.005)
        inside = inside - 1
        sem:release()
      end)
    end
    net.run()
    assert.equal(2, most)
    assert.equal(2, sem:available())
  end)

  it("what a task holds goes back when it ends without releasing", function()
    local lock = sync.lock()
    local r = net.in_task(function()
      local h = cosock.spawn(function() assert(lock:acquire()) end, "forgetful")
      h:join()
      return lock:acquire(1)
    end)
    assert.same(pack(true), r)
  end)

  it("a waiter behind a holder that is dropped by handle:cancel gets it", function()
    local lock = sync.lock()
    local r = net.in_task(function()
      local holder = cosock.spawn(function() assert(lock:acquire()); sleep(60) end, "holder")
      sleep(0)
      local waiter = cosock.spawn(function() return lock:acquire(5) end, "waiter")
      sleep(0)
      holder:cancel()
      return waiter:join()
    end)
    assert.same(pack(true, true), r)
  end)

  it("a scope's task that fails holding a lock gives it back; a cancelled waiter leaves the line", function()
    local lock = sync.lock()
    local log = {}
    local r = net.in_task(function()
      local outside = cosock.spawn(function()
        sleep(0.005)
        return lock:acquire(5)
      end, "outside")
      local ok, err = scope.run(function(s)
        s:spawn(function()
          assert(lock:acquire())
          sleep(0.01)
          error("holder failed", 0)
        end, "holder")
        s:spawn(function()
          sleep(0.001)
          local ok2, e = pcall(lock.acquire, lock, 30)
          log[#log + 1] = ok2 and "got it" or e
          if ok2 then lock:release() end
        end, "waiter")
      end)
      return ok, err, pack(outside:join())
    end)
    assert.same({ false, "holder failed" }, { r[1], r[2]:match("^[^\n]*") }) -- (then its stack and task)
    assert.same(pack(true, true), r[3])
    assert.equal(1, #log)
  end)

  it("a lock wait in a scope ends at the scope's deadline", function()
    local lock = sync.lock()
    local r = net.in_task(function()
      local tx, rx = cosock.channel.new()
      local holder = cosock.spawn(function() assert(lock:acquire()); rx:receive(); lock:release() end)
      sleep(0)
      local res = pack(scope.timeout(0.01, function() return lock:acquire() end))
      tx:send("done")
      holder:join()
      return res, lock:available()
    end)
    assert.same(pack(nil, "timeout"), r[1])
    assert.equal(1, r[2])
  end)

  it("checks its arguments and callers", function()
    local lock = sync.lock()
    assert.has_error(function() sync.semaphore(0) end,
      "bad argument #1 to 'semaphore' (integer >= 1 expected, got 0)")
    assert.has_error(function() lock:acquire() end,
      "cosock.sync: acquire must be called from a cosock task")
    assert.has_error(function() lock:release() end,
      "cosock.sync: release of a lock this task does not hold")
    assert.has_error(function() sync.lock().acquire({}) end)
    local r = net.in_task(function()
      local a = pack(pcall(lock.acquire, lock, "x"))
      assert(lock:acquire())
      local b = pack(pcall(lock.acquire, lock))
      assert.equal(1, lock:held())
      lock:release()
      return a, b
    end)
    assert.is_false(r[1][1])
    assert.truthy(r[1][2]:find("number or nil expected, got string", 1, true))
    assert.is_false(r[2][1])
    assert.truthy(r[2][2]:find("already held by this task", 1, true))
  end)

  it("the deadlock report names the scope's tasks and a lock's holder", function()
    local L = require "spec.support.loop"
    local lock = sync.lock()
    cosock.spawn(function()
      scope.run(function(s)
        s:spawn(function() lock:acquire(); local _, rx = cosock.channel.new(); rx:receive() end, "holder")
        s:spawn(function() sleep(0); lock:acquire() end, "waiter")
      end)
    end, "owner")
    local _, ok, err = L.capture(cosock.run)
    assert.is_false(ok)
    assert.truthy(err:find("task 'owner' waits for the end of 2 tasks of its scope (cosock.scope): 'holder', 'waiter'", 1, true))
    assert.truthy(err:find("task 'waiter' waits to acquire a lock (cosock.sync), held by task 'holder'", 1, true))
  end)
end)
