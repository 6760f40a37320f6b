-- Issue 35, item 9: a waiter cancelled in line (its scope cancelled) was
-- still handed the lock when a release came before it ran: its acquire
-- returned true. The permit goes to the next live waiter; the cancelled
-- one raises the cancellation; nothing is lost or held by it.

local cosock = require "cosock"
local sync = require "cosock.sync"
local scope = require "cosock.scope"
local compat = require "cosock.compat"
local net = require "spec.support.net"

local pack, pcall = compat.pack, compat.pcall
local sleep = cosock.socket.sleep

local WAYS = {
  acquire = function(sem) return sem:acquire() end,
  acquire_op = function(sem) return sem:acquire_op():perform() end,
}

describe("regress: a waiter cancelled in line", function()
  before_each(function() cosock.reset() end)

  for _, kind in ipairs({ "lock", "semaphore" }) do
    for way, wait in pairs(WAYS) do
      it(("is not handed the %s by a release before it runs (%s)"):format(kind, way), function()
        local sem = kind == "lock" and sync.lock() or sync.semaphore(1)
        local sc
        local r = net.in_task(function()
          assert(sem:acquire())
          local a = cosock.spawn(function()
            return scope.run(function(s)
              sc = s
              local ok, err = pcall(wait, sem)
              return ok, err, sem:held()
            end)
          end, "cancelled")
          sleep(0) -- (a waits in line)
          local b = cosock.spawn(function()
            local ok = wait(sem)
            local held = sem:held()
            sem:release()
            return ok, held
          end, "next")
          sleep(0) -- (b waits behind a)
          sc:cancel() -- a is made ready, cancelled, and has not run...
          sem:release() -- ...when the release comes
          return pack(a:join()), pack(b:join()), sem:available(), tostring(sem)
        end)
        assert.same(pack(true, true, false, scope.cancelled, 0), r[1])
        assert.same(pack(true, true, 1), r[2])
        assert.equal(1, r[3])
        assert.equal(("cosock.sync.%s (0 of 1 held by 0 tasks, 0 waiting)"):format(kind), r[4])
        net.assert_clean()
      end)
    end
  end
end)
