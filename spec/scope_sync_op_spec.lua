-- cosock.op over cosock.sync and cosock.scope: sem:acquire_op() and
-- s:wait_op() (doc/reference.md#module-cosocksync, #module-cosockscope).
-- One test per sentence of their entries. (Additions, not in cosock 0.2.0.)

local cosock = require "cosock"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local op, sync, scope = cosock.op, cosock.sync, cosock.scope
local pack = compat.pack
local pcall = compat.pcall
local sleep = cosock.socket.sleep
local CANCELLED = scope.cancelled

local function tag(name) return function(...) return name, ... end end

-- A task that takes lock l at once and holds it secs seconds.
local function holder(l, secs)
  cosock.spawn(function()
    assert(l:acquire())
    sleep(secs)
    l:release()
  end, "holder")
end

describe("cosock.op with cosock.sync and cosock.scope", function()
  before_each(function() cosock.reset() end)
  net.virtual_clock_each() -- (the tasks' order comes from their sleeps)

  describe("sem:acquire_op()", function()
    it("is an operation that takes a free lock at once (true)", function()
      local l = sync.lock()
      local r = net.in_task(function()
        local o = l:acquire_op()
        assert.is_true(op.is_op(o))
        local ok = o:perform()
        return ok, l:held(), l:available()
      end)
      assert.same(pack(true, 1, 0), r)
      net.assert_clean()
    end)

    it("waits in the same line as acquire, first come first served", function()
      local l, order = sync.lock(), {}
      holder(l, 0.02)
      cosock.spawn(function()
        sleep(0.005)
        assert(l:acquire(net.TIMEOUT))
        order[#order + 1] = "acquire"
        l:release()
      end, "plain")
      cosock.spawn(function()
        sleep(0.01)
        assert(op.choice(l:acquire_op(), op.sleep(net.TIMEOUT)):perform())
        order[#order + 1] = "op"
        l:release()
      end, "op")
      net.run()
      assert.same({ "acquire", "op" }, order)
      net.assert_clean()
    end)

    it("in a choice takes a permit only when it is the operation chosen", function()
      local a, b = sync.lock(), sync.lock()
      local got
      cosock.spawn(function()
        assert(a:acquire()); assert(b:acquire())
        sleep(0.01)
        a:release(); b:release() -- both free in the same pass
      end, "holder")
      cosock.spawn(function()
        sleep(0.005)
        got = pack(op.choice(a:acquire_op():wrap(tag("a")), b:acquire_op():wrap(tag("b"))):perform())
        assert.equal(1, a:held() + b:held())
        assert.equal(1, a:available() + b:available())
      end, "chooser")
      net.run()
      assert.same(pack("a", true), got)
      net.assert_clean()
    end)

    it("a choice another operation won leaves the line: the permit goes to the next waiter", function()
      local l = sync.lock()
      local tx, rx = cosock.channel.new()
      local log = {}
      cosock.spawn(function()
        assert(l:acquire())
        sleep(0.01)
        tx:send("m")
        sleep(0.01)
        l:release()
      end, "holder")
      cosock.spawn(function()
        sleep(0.002)
        local got = op.choice(l:acquire_op():wrap(tag("lock")), op.recv(rx)):perform()
        log[#log + 1] = got
        log[#log + 1] = l:held()
      end, "chooser")
      cosock.spawn(function()
        sleep(0.005)
        local ok = l:acquire(net.TIMEOUT) -- (waits: the log's index after it)
        log[#log + 1] = tostring(ok)
        l:release()
      end, "next")
      net.run()
      assert.same({ "m", 0, "true" }, log)
      assert.equal(1, l:available())
      net.assert_clean()
    end)

    it("works for a semaphore's permits", function()
      local sem, max, now = sync.semaphore(2), 0, 0
      for i = 1, 5 do
        cosock.spawn(function()
          assert(sem:acquire_op():perform())
          now = now + 1
          if now > max then max = now end
          sleep(0.002)
          now = now - 1
          sem:release()
        end, "worker " .. i)
      end
      net.run()
      assert.equal(2, max)
      assert.equal(2, sem:available())
      net.assert_clean()
    end)

    it("raises for a lock the performing task holds already", function()
      local l = sync.lock()
      local r = net.in_task(function()
        assert(l:acquire())
        local ok, err = pcall(op.perform, l:acquire_op())
        l:release()
        return ok, err
      end)
      assert.is_false(r[1])
      assert.truthy(tostring(r[2]):find("cosock.sync: the lock is already held by this task", 1, true))
      assert.has_error(function() sync.lock().acquire_op({}) end,
        "bad self to 'acquire_op' (cosock.sync lock or semaphore expected, got table)")
    end)

    it("in a scope: a cancelled waiter raises the cancellation and leaves the line", function()
      local l, log = sync.lock(), {}
      holder(l, 0.02)
      cosock.spawn(function()
        local r = pack(scope.run(function(s)
          s:spawn(function()
            local ok, e = pcall(op.perform, l:acquire_op())
            log[#log + 1] = e
            error(e, 0)
          end, "waiter")
          sleep(0.005)
          s:cancel()
        end))
        log[#log + 1] = r
        log[#log + 1] = tostring(l:acquire(net.TIMEOUT))
        l:release()
      end, "scope")
      net.run()
      assert.same({ CANCELLED, pack(true), "true" }, log)
      net.assert_clean()
    end)

    it("the deadlock report names the lock and its holder for a perform waiting on it", function()
      local L = require "spec.support.loop"
      local l = sync.lock()
      cosock.spawn(function()
        scope.run(function(s) -- (a scope's holder says when it ends: no recheck keeps the loop busy)
          s:spawn(function() l:acquire(); local _, rx = cosock.channel.new(); rx:receive() end, "holder")
          s:spawn(function() sleep(0); op.choice(l:acquire_op(), op.never()):perform() end, "chooser")
        end)
      end, "owner")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.truthy(err:find("task 'chooser' waits to acquire a lock (cosock.sync), held by task 'holder'", 1, true))
    end)

    it("in a scope: the wait ends at the scope's deadline", function()
      local l = sync.lock()
      local r = net.in_task(function()
        cosock.spawn(function() assert(l:acquire()); sleep(0.05); l:release() end, "holder")
        sleep(0)
        return scope.timeout(0.01, function() return l:acquire_op():perform() end)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.equal(1, l:available())
      net.assert_clean()
    end)
  end)

  describe("s:wait_op()", function()
    it("is ready once the scope has ended, with what scope.run returned", function()
      local log = {}
      local sc
      cosock.spawn(function()
        scope.run(function(s)
          sc = s
          s:spawn(function() sleep(0.01) end, "child")
          return "a", nil, 3
        end)
      end, "runner")
      cosock.spawn(function()
        sleep(0)
        local o = sc:wait_op()
        log[#log + 1] = pack(op.choice(o, op.always("early")):perform())
        log[#log + 1] = pack(o:perform())
        log[#log + 1] = pack(sc:wait_op():perform()) -- made after the end
      end, "watcher")
      net.run()
      assert.same({ pack("early"), pack(true, "a", nil, 3), pack(true, "a", nil, 3) }, log)
      net.assert_clean()
    end)

    it("gives false, err for a failed scope and false, \"timeout\" for one past its deadline", function()
      local failed, late
      local r = net.in_task(function()
        scope.run(function(s) failed = s; error("boom", 0) end)
        scope.run({ timeout = 0.005 }, function(s) late = s; sleep(1) end)
        return pack(failed:wait_op():perform()), pack(late:wait_op():perform())
      end)
      assert.same(pack(false, "boom"), r[1])
      assert.same(pack(false, "timeout"), r[2])
      net.assert_clean()
    end)

    it("raises for a bad self", function()
      local r = net.in_task(function()
        return scope.run(function(s) return pcall(s.wait_op, {}) end)
      end)
      assert.is_true(r[1])
      assert.is_false(r[2])
      assert.truthy(r[3]:find("bad self to 'wait_op' (cosock.scope expected, got table)", 1, true))
    end)
  end)

  it("examples/sync_op.lua prints what its header says", function()
    local L = require "spec.support.loop"
    local out, ok, err = L.capture(dofile, "examples/sync_op.lua")
    assert(ok, err)
    assert.equal(table.concat({
      "choice: message 'config changed' (lock held: 0)",
      "choice: lock (lock held: 1)",
      "workers: 6 done, at most 2 at once",
      "watcher: the scope ended: true 6",
    }, "\n") .. "\n", out)
    net.assert_clean()
  end)
end)
