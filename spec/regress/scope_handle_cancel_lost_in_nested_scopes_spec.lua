-- Found by the re-entrancy fuzzer once it ran scopes (issue 35): a
-- handle:cancel() of a task two scopes deep was learnt by the innermost
-- scope only; the one enclosing it took the cancellation for its own
-- s:cancel()'s (run returned false, "cancelled") and the task went on as an
-- ordinary task, its later waits no longer raising. Also lost: a
-- handle:cancel() that came when the task's scope had cancelled it already
-- (src/features/cancel.c now keeps that a handle's cancel came). The task stays cancelled: every enclosing run raises the
-- cancellation after its cleanup, and so does each later wait.

local cosock = require "cosock"
local scope = require "cosock.scope"
local compat = require "cosock.compat"
local net = require "spec.support.net"

local pack, pcall = compat.pack, compat.pcall
local sleep = cosock.socket.sleep

describe("regress: a handle:cancel() of a task in nested scopes", function()
  before_each(function() cosock.reset() end)

  it("reaches every enclosing scope and stays", function()
    local log = {}
    net.in_task(function()
      local h = cosock.spawn(function()
        local r = pack(pcall(scope.run, function()
          return scope.run(function() sleep(5) end)
        end))
        log.run = r
        log.sleep = pack(pcall(sleep, 5))
      end, "cancelled")
      sleep(0)
      h:cancel()
      h:join()
    end)
    assert.same(pack(false, scope.cancelled), log.run)
    assert.same(pack(false, scope.cancelled), log.sleep)
  end)

  it("is not lost when the task's scope had cancelled it already", function()
    local log = {}
    net.in_task(function()
      local sc
      local h = cosock.spawn(function()
        log.run = pack(pcall(scope.run, function()
          return scope.run(function(s) sc = s; sleep(5) end)
        end))
        log.sleep = pack(pcall(sleep, 5))
      end, "cancelled twice")
      sleep(0)
      sc:cancel() -- (its inner scope's cancellation first...)
      h:cancel() -- (...then its handle's, before it runs)
      h:join()
    end)
    assert.same(pack(false, scope.cancelled), log.run)
    assert.same(pack(false, scope.cancelled), log.sleep)
  end)
end)
