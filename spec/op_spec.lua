-- cosock.op: the combinators (choice, wrap, guard, with_nack, always, never,
-- sleep, deadline), what perform returns, and the argument errors.
-- (Channels: op_channels_spec.lua; join, timer, sockets, cond: op_sources_spec.lua.)

local cosock = require "cosock"
local op = require "cosock.op"
local net = require "spec.support.net"

local channel = cosock.channel
local pack = net.pack

-- Runs fn as a task to completion; returns what it returned (packed).
local in_task = net.in_task

describe("cosock.op", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)
  net.virtual_clock_each() -- (sleeps order the tasks: on the simulation's clock)

  it("is cosock.op", function()
    assert.equal(op, cosock.op)
  end)

  describe("always and perform's results", function()
    it("always(...) completes at once with its values, nils and count kept", function()
      local r = in_task(function() return op.always(1, nil, "x", nil):perform() end)
      assert.same(pack(1, nil, "x", nil), r)
    end)

    it("perform does not give up the processor when an operation is ready", function()
      local log = {}
      cosock.spawn(function()
        op.always():perform()
        log[#log + 1] = "performed"
      end, "a")
      cosock.spawn(function() log[#log + 1] = "other" end, "b")
      net.run()
      assert.same({ "performed", "other" }, log)
    end)
  end)

  describe("choice", function()
    it("takes the first ready operation in argument order", function()
      local r = in_task(function()
        return op.choice(op.never(), op.always("first"), op.always("second")):perform()
      end)
      assert.same(pack("first"), r)
    end)

    it("between two channels with messages, takes the first and leaves the other's", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new()
        local tx2, rx2 = channel.new()
        tx1:send("one")
        tx2:send("two")
        local a = op.choice(op.recv(rx2), op.recv(rx1)):perform()
        local b = op.choice(op.recv(rx1), op.recv(rx2)):perform()
        return a, b, #rx1.link.queue, #rx2.link.queue
      end)
      assert.same(pack("two", "one", 0, 0), r)
    end)

    it("flattens nested choices, keeping the order", function()
      local r = in_task(function()
        local inner = op.choice(op.never(), op.always("inner"))
        return op.choice(op.never(), inner, op.always("outer")):perform()
      end)
      assert.same(pack("inner"), r)
    end)

    it("waits until one of them becomes ready, and takes only that one", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new()
        local tx2, rx2 = channel.new()
        cosock.spawn(function()
          cosock.socket.sleep(0.01)
          tx2:send("late")
        end, "sender")
        local v = op.choice(op.recv(rx1), op.recv(rx2)):perform()
        tx1:send("kept")
        return v, rx1:receive()
      end)
      assert.same(pack("late", "kept"), r)
    end)

    it("with no operations never completes: the loop stalls", function()
      cosock.spawn(function() op.choice():perform() end, "forever")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("no sockets and no timeout", 1, true))
      assert.truthy(tostring(err):find("forever", 1, true))
    end)
  end)

  describe("wrap", function()
    it("applies f to the results of the chosen operation", function()
      local r = in_task(function()
        return op.always(2, 3):wrap(function(a, b) return a * b, "x" end):perform()
      end)
      assert.same(pack(6, "x"), r)
    end)

    it("composes: op:wrap(f):wrap(g) returns g(f(...))", function()
      local r = in_task(function()
        return op.always(1)
          :wrap(function(v) return v + 1 end)
          :wrap(function(v) return v * 10 end)
          :wrap(function(v) return "got " .. v end)
          :perform()
      end)
      assert.same(pack("got 20"), r)
    end)

    it("in a choice, only the chosen branch's wrap runs, once", function()
      local calls = {}
      local r = in_task(function()
        local a = op.never():wrap(function() calls[#calls + 1] = "a" end)
        local b = op.always("b"):wrap(function(v) calls[#calls + 1] = v; return "B" end)
        local c = op.always("c"):wrap(function(v) calls[#calls + 1] = v end)
        return op.choice(a, b, c):wrap(function(v) return v .. "!" end):perform()
      end)
      assert.same(pack("B!"), r)
      assert.same({ "b" }, calls)
    end)

    it("an operation may be performed many times, wraps each time", function()
      local n = 0
      local o = op.always(1):wrap(function(v) n = n + v; return n end)
      local r = in_task(function() return o:perform(), o:perform(), o:perform() end)
      assert.same(pack(1, 2, 3), r)
    end)
  end)

  describe("guard", function()
    it("calls its function at each perform, not when made", function()
      local calls = 0
      local g = op.guard(function()
        calls = calls + 1
        return op.always(calls)
      end)
      assert.equal(0, calls)
      local r = in_task(function() return g:perform(), g:perform() end)
      assert.same(pack(1, 2), r)
    end)

    it("sees the state at perform time (a deadline taken then)", function()
      local r = in_task(function()
        local g = op.guard(function() return op.deadline(cosock.timer.now() + 0.01) end)
        cosock.socket.sleep(0.02)
        -- Made 0.02 s ago, the guard's deadline is still 0.01 s away: the
        -- channel message sent in between wins.
        local tx, rx = channel.new()
        cosock.spawn(function() tx:send("msg") end, "sender")
        return op.choice(g:wrap(function() return "deadline" end), op.recv(rx)):perform()
      end)
      assert.same(pack("msg"), r)
    end)

    it("raises from perform when its function returns something else", function()
      local r = in_task(function()
        return pcall(op.guard(function() return 42 end).perform, op.guard(function() return 42 end))
      end)
      assert.is_false(r[1])
      assert.equal("cosock.op: the guard function returned number, not an operation", r[2])
    end)
  end)

  describe("with_nack", function()
    it("fires the nack of the branch not chosen, not of the chosen one", function()
      local log = {}
      in_task(function()
        local na, nb
        local a = op.with_nack(function(nack) na = nack; return op.never() end)
        local b = op.with_nack(function(nack) nb = nack; return op.always("b") end)
        local v = op.choice(a, b):perform()
        log[#log + 1] = v
        log[#log + 1] = op.choice(na:wrap(function() return "a nacked" end), op.always("a not")):perform()
        log[#log + 1] = op.choice(nb:wrap(function() return "b nacked" end), op.always("b not")):perform()
      end)
      assert.same({ "b", "a nacked", "b not" }, log)
    end)

    it("a task waiting on the nack wakes when another branch is chosen later", function()
      local log = {}
      in_task(function()
        local tx, rx = channel.new()
        local w = op.with_nack(function(nack)
          cosock.spawn(function()
            nack:perform()
            log[#log + 1] = "nack"
          end, "nack waiter")
          return op.sleep(5)
        end)
        cosock.spawn(function()
          cosock.socket.sleep(0.01)
          tx:send("m")
        end, "sender")
        log[#log + 1] = op.choice(w, op.recv(rx)):perform()
        cosock.socket.sleep(0.001)
      end)
      assert.same({ "m", "nack" }, log)
    end)

    it("fires for every with_nack not on the chosen path, nested ones too", function()
      local fired = {}
      in_task(function()
        local nacks = {}
        local function branch(name, o)
          return op.with_nack(function(n) nacks[name] = n; return o end)
        end
        local inner = op.choice(branch("x", op.never()), branch("y", op.always("y")))
        local outer = branch("outer", inner)
        op.choice(branch("z", op.never()), outer):perform()
        for name, n in pairs(nacks) do
          if op.choice(n:wrap(function() return true end), op.always(false)):perform() then
            fired[#fired + 1] = name
          end
        end
        table.sort(fired)
      end)
      assert.same({ "x", "z" }, fired)
    end)

    it("calls its function at each perform, with a fresh nack", function()
      local seen = {}
      local w = op.with_nack(function(n) seen[#seen + 1] = n; return op.always() end)
      in_task(function() w:perform(); w:perform() end)
      assert.equal(2, #seen)
      assert.not_equal(seen[1], seen[2])
    end)

    it("does not fire for the chosen branch when another task's signal or send wakes the perform", function()
      local r = in_task(function()
        local c = op.cond()
        local tx, rx = channel.new()
        local nacks = {}
        local function nacked(n) return op.choice(n:wrap(function() return true end), op.always(false)):perform() end
        cosock.spawn(function()
          cosock.socket.sleep(0.005)
          c:signal()
          cosock.socket.sleep(0.005)
          tx:send("m")
        end, "waker")
        local a = op.choice(
          op.with_nack(function(n) nacks.cond = n return c:wait_op():wrap(function() return "cond" end) end),
          op.with_nack(function(n) nacks.other1 = n return op.sleep(5) end)):perform()
        local b = op.choice(
          op.with_nack(function(n) nacks.recv = n return op.recv(rx) end),
          op.with_nack(function(n) nacks.other2 = n return op.sleep(5) end)):perform()
        return a, nacked(nacks.cond), nacked(nacks.other1), b, nacked(nacks.recv), nacked(nacks.other2)
      end)
      assert.same(pack("cond", false, true, "m", false, true), r)
    end)

    it("fires when the performing task is cancelled", function()
      local log = {}
      cosock.spawn(function()
        local nack
        local h = cosock.spawn(function()
          op.with_nack(function(n) nack = n; return op.never() end):perform()
          log[#log + 1] = "returned"
        end, "performer")
        cosock.socket.sleep(0.01)
        assert.is_false(op.choice(nack:wrap(function() return true end), op.always(false)):perform())
        h:cancel()
        log[#log + 1] = op.choice(nack:wrap(function() return "nacked" end), op.always("not"))
          :perform()
      end, "canceller")
      net.run()
      assert.same({ "nacked" }, log)
    end)
  end)

  describe("never, sleep and deadline", function()
    it("sleep(s) is chosen after s seconds when nothing else is", function()
      local r = in_task(function()
        local t0 = cosock.timer.now()
        local v = op.choice(op.never(), op.sleep(0.02):wrap(function() return "slept" end)):perform()
        return v, cosock.timer.now() - t0 >= 0.02
      end)
      assert.same(pack("slept", true), r)
    end)

    it("a timeout choice does not take a message sent after it", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        local v = op.choice(op.recv(rx), op.sleep(0.01):wrap(function() return "timeout" end)):perform()
        tx:send("later")
        return v, rx:receive()
      end)
      assert.same(pack("timeout", "later"), r)
    end)

    it("sleep(0) and a past deadline are ready at once, after earlier ready branches", function()
      local r = in_task(function()
        local a = op.choice(op.sleep(0):wrap(function() return "sleep" end), op.always("always")):perform()
        local b = op.choice(op.always("always"), op.deadline(0):wrap(function() return "deadline" end)):perform()
        return a, b
      end)
      assert.same(pack("sleep", "always"), r)
    end)

    it("deadline(t) is on cosock.timer.now()'s clock", function()
      local r = in_task(function()
        local t = cosock.timer.now() + 0.02
        op.deadline(t):perform()
        return cosock.timer.now() >= t
      end)
      assert.same(pack(true), r)
    end)

    it("sleep and deadline complete with no values", function()
      local r = in_task(function() return op.sleep(0):perform() end)
      assert.equal(0, r.n)
    end)
  end)

  describe("errors", function()
    local function err(fn, ...)
      local ok, e = pcall(fn, ...)
      assert.is_false(ok)
      return tostring(e):gsub("^[^:]*:%d+: ", "")
    end

    it("choice of a non-operation", function()
      assert.equal("bad argument #1 to 'choice' (cosock.op operation expected, got number)", err(op.choice, 1))
      assert.equal("bad argument #2 to 'choice' (cosock.op operation expected, got string)",
        err(op.choice, op.always(), "x"))
      assert.equal("bad argument #2 to 'choice' (cosock.op operation expected, got nil)",
        err(op.choice, op.always(), nil, op.always()))
    end)

    it("wrap, guard and with_nack of a non-function", function()
      assert.equal("bad argument #1 to 'wrap' (function expected, got nil)", err(op.always().wrap, op.always()))
      assert.equal("bad argument #1 to 'guard' (function expected, got number)", err(op.guard, 5))
      assert.equal("bad argument #1 to 'with_nack' (function expected, got table)", err(op.with_nack, {}))
    end)

    it("bad sleep times and deadlines", function()
      assert.equal("bad argument #1 to 'sleep' (finite number >= 0 expected, got -1)", err(op.sleep, -1))
      assert.equal("bad argument #1 to 'sleep' (number expected, got string)", err(op.sleep, "1"))
      assert.equal("bad argument #1 to 'sleep' (number expected, got nil)", err(op.sleep))
      assert.truthy(err(op.sleep, 0 / 0):find("finite number >= 0 expected", 1, true))
      assert.equal("bad argument #1 to 'sleep' (finite number >= 0 expected, got inf)",
        (err(op.sleep, math.huge):gsub("got %-?inf", "got inf")))
      assert.equal("bad argument #1 to 'deadline' (number expected, got string)", err(op.deadline, "x"))
      assert.equal("bad argument #1 to 'deadline' (number expected, got nan)", err(op.deadline, 0 / 0))
    end)

    it("base operations of the wrong objects", function()
      local tx, rx = channel.new()
      assert.equal("bad argument #1 to 'send' (cosock.channel sender expected, got table)", err(op.send, rx, 1))
      assert.equal("bad argument #1 to 'recv' (cosock.channel receiver expected, got table)", err(op.recv, tx))
      assert.equal("bad argument #1 to 'recv' (cosock.channel receiver expected, got nil)", err(op.recv))
      assert.equal("bad argument #1 to 'readable' (cosock socket expected, got number)", err(op.readable, 5))
      assert.equal("bad argument #1 to 'writable' (cosock socket expected, got table)", err(op.writable, {}))
      assert.equal("bad argument #1 to 'join' (cosock thread handle expected, got table)", err(op.join, {}))
      assert.equal("bad argument #1 to 'timer' (cosock.timer timer expected, got number)", err(op.timer, 5))
      assert.equal("bad argument #1 to 'perform' (cosock.op operation expected, got table)", err(op.perform, {}))
      assert.equal("bad argument #1 to 'signal' (cosock.op cond expected, got nil)", err(op.cond().signal))
    end)

    it("errors name the caller's line", function()
      for _, f in ipairs {
        -- (not tail calls: those leave no line to name)
        function() local o = op.sleep(-1); return o end,
        function() local o = op.guard(1); return o end,
        function() local o = op.always():wrap(1); return o end,
        function() local o = op.choice(1); return o end,
        function() local o = op.recv(1); return o end,
        function() local o = op.readable(1); return o end,
      } do
        local ok, e = pcall(f)
        assert.is_false(ok)
        assert.truthy(tostring(e):find("^[^\n]*op_spec.lua:%d+: bad argument"), e)
      end
    end)

    it("perform outside a task", function()
      local ok, e = pcall(function() local v = op.always(1):perform(); return v end)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("op_spec.lua:%d+: cosock.op: perform must be called from a cosock task"))
    end)

    it("an error in a guard comes out of perform, and fires the nacks made so far", function()
      local r = in_task(function()
        local nack
        local o = op.choice(
          op.with_nack(function(n) nack = n; return op.never() end),
          op.guard(function() error("guard failed", 0) end))
        local ok, e = pcall(o.perform, o)
        return ok, e, op.choice(nack:wrap(function() return "nacked" end), op.always("not")):perform()
      end)
      assert.same(pack(false, "guard failed", "nacked"), r)
    end)
  end)
end)
