-- cosock.op's other base operations: join (thread handles), timer (cosock.timer
-- objects), readable / writable (cosock sockets) and cond (one-shot conditions).

local cosock = require "cosock"
local core = require "cosock.core"
local op = require "cosock.op"
local net = require "spec.support.net"

local pack = net.pack
local timer = cosock.timer

local in_task = net.in_task

local function timeout_op(s)
  return op.sleep(s):wrap(function() return "timeout" end)
end

describe("cosock.op sources", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    cosock.set_error_handler(nil)
    net.check_clean()
  end)

  describe("join", function()
    it("is ready once the task ended, with join's results", function()
      local r = in_task(function()
        local h = cosock.spawn(function()
          cosock.socket.sleep(0.01)
          return 1, nil, 3
        end, "worker")
        return op.join(h):perform()
      end)
      assert.same(pack(true, 1, nil, 3), r)
    end)

    it("an ended task answers at once; a running one loses to a timeout", function()
      local r = in_task(function()
        local quick = cosock.spawn(function() return "done" end, "quick")
        local slow = cosock.spawn(function() cosock.socket.sleep(0.05) end, "slow")
        cosock.socket.sleep(0)
        local a = pack(op.choice(op.join(slow), op.join(quick)):perform())
        local b = op.choice(op.join(slow), timeout_op(0.005)):perform()
        return a[1], a[2], b
      end)
      assert.same(pack(true, "done", "timeout"), r)
    end)

    it("a failed task gives false, err; a cancelled one nil, 'cancelled'", function()
      cosock.set_error_handler(function() end)
      local r = in_task(function()
        local bad = cosock.spawn(function() error("boom", 0) end, "bad")
        local idle = cosock.spawn(function() cosock.socket.sleep(5) end, "idle")
        local a = pack(op.join(bad):perform())
        idle:cancel()
        local b = pack(op.join(idle):perform())
        return a[1], a[2]:match("^boom") ~= nil, b[1], b[2]
      end)
      assert.same(pack(false, true, nil, "cancelled"), r)
    end)
  end)

  describe("timer", function()
    it("is ready once the timer is due, and performing it handles it", function()
      local r = in_task(function()
        local t = timer.create_oneshot(0.01)
        local before = core.timer_info(t)
        local v = op.timer(t):perform()
        return before, v, core.timer_info(t)
      end)
      assert.equal("pending", r[1])
      assert.is_true(r[2])
      assert.not_equal("due", r[3])
    end)

    it("an interval timer is ready once per tick", function()
      local r = in_task(function()
        local t = timer.create_interval(0.01)
        local n = 0
        for _ = 1, 3 do
          if op.timer(t):perform() then n = n + 1 end
        end
        -- just handled: the next tick is not due yet
        local v = op.choice(op.timer(t), op.always("not due")):perform()
        t:cancel()
        return n, v
      end)
      assert.same(pack(3, "not due"), r)
    end)

    it("loses to an earlier timeout; a cancelled timer gives nil, 'cancelled'", function()
      local r = in_task(function()
        local t = timer.create_oneshot(1)
        local a = op.choice(op.timer(t), timeout_op(0.005)):perform()
        t:cancel()
        return a, op.timer(t):perform()
      end)
      assert.same(pack("timeout", nil, "cancelled"), r)
    end)
  end)

  describe("readable and writable", function()
    it("readable(sock) is ready when data arrives, with the socket", function()
      local r = in_task(function()
        local c, s = net.pair()
        local a = op.choice(op.readable(s), timeout_op(0.01)):perform()
        cosock.spawn(function() cosock.socket.sleep(0.01); c:send("x\n") end, "writer")
        local b = op.readable(s):perform()
        local line = s:receive()
        c:close()
        s:close()
        return a, b == s, line
      end)
      assert.same(pack("timeout", true, "x"), r)
    end)

    it("buffered data counts as readable", function()
      local r = in_task(function()
        local c, s = net.pair()
        c:send("a\nb\n")
        assert.equal("a", s:receive()) -- "b\n" stays in the socket's buffer
        local v = op.choice(op.readable(s), timeout_op(0.05)):perform()
        c:close()
        s:close()
        return v == s
      end)
      assert.same(pack(true), r)
    end)

    it("writable(sock) is ready on a connected socket", function()
      local r = in_task(function()
        local c, s = net.pair()
        local v = op.choice(op.writable(c), timeout_op(0.05)):perform()
        c:close()
        s:close()
        return v == c
      end)
      assert.same(pack(true), r)
    end)
  end)

  describe("cond", function()
    it("wait_op is ready once signalled, for every waiter, now and later", function()
      local log = {}
      cosock.spawn(function()
        local c = op.cond()
        for i = 1, 3 do
          cosock.spawn(function()
            c:wait_op():perform()
            log[#log + 1] = "woke " .. i
          end, "waiter " .. i)
        end
        cosock.socket.sleep(0.01)
        log[#log + 1] = "signal"
        c:signal()
        c:signal()
        cosock.socket.sleep(0.01)
        c:wait_op():perform()
        log[#log + 1] = "later"
      end, "signaller")
      net.run()
      assert.same({ "signal", "woke 1", "woke 2", "woke 3", "later" }, log)
    end)

    it("not signalled: loses to a timeout; signal works outside a task", function()
      local c = op.cond()
      local r = in_task(function() return op.choice(c:wait_op(), timeout_op(0.005)):perform() end)
      c:signal()
      local r2 = in_task(function() return op.choice(c:wait_op():wrap(function() return "ready" end), timeout_op(1)):perform() end)
      assert.same(pack("timeout"), r)
      assert.same(pack("ready"), r2)
    end)

    it("a waiter that moved on is not woken again", function()
      local r = in_task(function()
        local c = op.cond()
        local v = op.choice(c:wait_op(), timeout_op(0.005)):perform()
        c:signal() -- the perform above must not be woken a second time
        cosock.socket.sleep(0.005)
        return v, next(c.waiters)
      end)
      assert.same(pack("timeout", nil), r)
    end)
  end)
end)
