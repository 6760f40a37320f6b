-- cosock.scope: task scopes, cancellation that cleans up, deadlines
-- (doc/reference.md#cosockscope, doc/structured-concurrency.md). One
-- test per sentence of the contract. (Not in cosock 0.2.0: an addition.)

local cosock = require "cosock"
local scope = require "cosock.scope"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local pack, unpack = compat.pack, compat.unpack
local pcall = compat.pcall -- (a pcall a task may wait in, on Lua 5.1 too)
local current_task = require("cosock.core").current_task
local sleep = cosock.socket.sleep
local CANCELLED = scope.cancelled

-- The first line of a task's error (the message; then come the task's
-- stack and "(in task ...)": spec/scope_errors_spec.lua).
local function first_line(err)
  return type(err) == "string" and err:match("^[^\n]*") or err
end

-- Runs fn in a task and the loop; returns fn's results packed.
local function in_task(fn)
  return net.in_task(fn)
end

-- A wait nothing ends but a cancellation: a receive on a channel nobody sends on.
local function forever()
  local _, rx = cosock.channel.new()
  return rx:receive()
end

describe("cosock.scope", function()
  before_each(function() cosock.reset() end)

  it("is cosock.scope, loaded on first use", function()
    assert.equal(scope, cosock.scope)
    assert.equal(CANCELLED, require("cosock.core").cancelled)
    assert.equal("cosock.scope: cancelled", tostring(CANCELLED))
  end)

  describe("run", function()
    it("runs fn(s, ...) in the calling task and returns true and fn's results", function()
      local r = in_task(function()
        local co = current_task()
        return scope.run(function(s, a, b)
          assert.equal(s, scope.current())
          assert.equal(co, current_task())
          return a + b, nil, "x"
        end, 1, 2)
      end)
      assert.same(pack(true, 3, nil, "x"), r)
      net.assert_clean()
    end)

    it("returns only when every task started with s:spawn has ended", function()
      local ended = {}
      local r = in_task(function()
        local ok = scope.run(function(s)
          for i = 1, 3 do
            s:spawn(function() sleep(0.01 * i); ended[#ended + 1] = i end, "t" .. i)
          end
          return "fn done"
        end)
        return ok, #ended
      end)
      assert.same(pack(true, 3), r)
      net.assert_clean()
    end)

    it("s:spawn returns a normal handle whose join gives the task's results", function()
      local r = in_task(function()
        local got
        local ok = scope.run(function(s)
          local h = s:spawn(function() return "a", 2 end, "worker")
          assert.equal("worker", h.name)
          assert.equal("worker", tostring(h))
          got = pack(h:join())
        end)
        return ok, got
      end)
      assert.is_true(r[1])
      assert.same(pack(true, "a", 2), r[2])
    end)

    it("when a task raises, cancels the others (with cleanup) and returns false and the first error", function()
      local log = {}
      local r = in_task(function()
        local h2
        local ok, err = scope.run(function(s)
          s:spawn(function()
            local ok2, e = pcall(forever)
            log[#log + 1] = e
            error(e, 0)
          end, "waiter")
          s:spawn(function() sleep(0.01); error({ first = true }) end, "failer")
          h2 = s:spawn(function() sleep(0.02); error("second") end, "late failer")
          forever()
        end)
        return ok, err, pack(h2:join())
      end)
      assert.is_false(r[1])
      assert.is_true(r[2].first)
      assert.same({ CANCELLED }, log)
      -- the late one was cancelled before it could fail: its handle says so
      assert.same(pack(nil, "cancelled"), r[3])
      net.assert_clean()
    end)

    it("the others' errors are on their handles (join), not the error handler's", function()
      local handled = 0
      cosock.set_error_handler(function() handled = handled + 1 end)
      local r = in_task(function()
        local h1, h2
        local ok, err = scope.run(function(s)
          h1 = s:spawn(function() sleep(0); error("one", 0) end, "a")
          h2 = s:spawn(function()
            local ok2, e = pcall(forever)
            assert(e == CANCELLED)
            error("two", 0) -- fails while unwinding
          end, "b")
        end)
        return ok, err, pack(h1:join()), pack(h2:join())
      end)
      assert.same({ false, "one" }, { r[1], first_line(r[2]) })
      assert.is_false(r[3][1])
      assert.truthy(r[3][2]:find("one", 1, true))
      assert.is_false(r[4][1])
      assert.truthy(r[4][2]:find("two", 1, true))
      assert.equal(0, handled)
    end)

    it("fn's own error fails the scope and cancels its tasks", function()
      local cleaned = false
      local r = in_task(function()
        return scope.run(function(s)
          s:spawn(function()
            local ok = pcall(forever)
            cleaned = not ok
          end)
          sleep(0)
          error("fn failed", 0)
        end)
      end)
      assert.same(pack(false, "fn failed"), r)
      assert.is_true(cleaned)
    end)

    it("raises a clear error outside a task and for a non-function", function()
      assert.has_error(function() scope.run(function() end) end,
        "cosock.scope: must be called from a cosock task")
      local r = in_task(function() return pcall(scope.run, 42) end)
      assert.is_false(r[1])
      assert.truthy(r[2]:find("function or table of options expected, got number", 1, true))
    end)
  end)

  describe("cancellation", function()
    it("s:cancel() cancels every task of the scope and of scopes nested in it", function()
      local log = {}
      local r = in_task(function()
        return scope.run(function(s)
          s:spawn(function()
            local ok, e = pcall(forever)
            log[#log + 1] = "outer " .. tostring(e)
          end)
          s:spawn(function()
            scope.run(function(inner)
              inner:spawn(function()
                local ok, e = pcall(forever)
                log[#log + 1] = "inner " .. tostring(e)
              end)
              forever()
            end)
          end)
          sleep(0.01)
          s:cancel()
          return "fn"
        end)
      end)
      assert.same(pack(true, "fn"), r)
      table.sort(log)
      assert.same({ "inner cosock.scope: cancelled", "outer cosock.scope: cancelled" }, log)
      net.assert_clean()
    end)

    it("fn raising the cancellation of s:cancel() makes run return false, \"cancelled\"", function()
      local r = in_task(function()
        return scope.run(function(s) s:cancel(); sleep(1); return "not reached" end)
      end)
      assert.same(pack(false, "cancelled"), r)
    end)

    it("a cancelled task's later waits raise again at once (they do not wait)", function()
      local errs = {}
      local t0
      in_task(function()
        scope.run(function(s)
          s:spawn(function()
            for _ = 1, 3 do
              local ok, e = pcall(sleep, 10)
              errs[#errs + 1] = e
            end
            local ok, e = pcall(function() local _, rx = cosock.channel.new(); return rx:receive(5) end)
            errs[#errs + 1] = e
          end)
          sleep(0)
          t0 = cosock.timer.now()
          s:cancel()
        end)
      end)
      assert.same({ CANCELLED, CANCELLED, CANCELLED, CANCELLED }, errs)
      assert.is_true(cosock.timer.now() - t0 < 5) -- (a wait of 5 s would be the failure)
    end)

    it("s:defer functions run when the scope ends, last first, after its tasks", function()
      local log = {}
      local r = in_task(function()
        return scope.run(function(s)
          s:defer(function() log[#log + 1] = "d1" end)
          s:defer(function() log[#log + 1] = "d2" end)
          s:spawn(function() sleep(0.01); log[#log + 1] = "task" end)
          error("x", 0)
        end)
      end)
      assert.same(pack(false, "x"), r)
      assert.same({ "d2", "d1" }, log)
    end)

    it("cancel during cleanup: a deferred function's wait obeys an enclosing scope's deadline", function()
      local log = {}
      local r = in_task(function()
        return scope.timeout(0.02, function()
          scope.run(function(s)
            s:defer(function()
              local ok, e = pcall(sleep, 30) -- the outer deadline ends it
              log[#log + 1] = e
            end)
            local ok, e = pcall(forever)
            log[#log + 1] = e
            error(e, 0)
          end)
          return "not reached"
        end)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.same({ CANCELLED, CANCELLED }, log)
    end)

    it("a defer's error fails a scope that had none", function()
      local r = in_task(function()
        return scope.run(function(s) s:defer(function() error("in defer", 0) end) return 1 end)
      end)
      assert.same(pack(false, "in defer"), r)
    end)

    it("handle:cancel() on a scope's task takes the cleanup path", function()
      local log = {}
      local r = in_task(function()
        return scope.run(function(s)
          local h = s:spawn(function()
            local ok, e = pcall(forever)
            log[#log + 1] = e
            error(e, 0)
          end)
          sleep(0)
          h:cancel()
          local j = pack(h:join())
          return j[1], j[2]
        end)
      end)
      assert.same({ CANCELLED }, log)
      assert.same(pack(true, nil, "cancelled"), r) -- a cancelled task does not fail its scope
    end)

    it("a task of a scope cancelled before it ran does not run", function()
      local ran = false
      local r = in_task(function()
        local h
        local ok, err = scope.run(function(s)
          s:spawn(function() error("first", 0) end)
          h = s:spawn(function() ran = true end)
        end)
        return ok, err, pack(h:join())
      end)
      assert.is_false(ran)
      assert.same({ false, "first" }, { r[1], first_line(r[2]) })
      assert.same(pack(nil, "cancelled"), r[3])
    end)

    it("handle:cancel() on a scope's task that has not run yet ends it cancelled, unrun", function()
      local ran = false
      local r = in_task(function()
        return scope.run(function(s)
          local h = s:spawn(function() ran = true end)
          h:cancel()
          local j = pack(h:join())
          return j[1], j[2]
        end)
      end)
      assert.is_false(ran)
      assert.same(pack(true, nil, "cancelled"), r)
      net.assert_clean()
    end)

    it("a scope's tasks are cancelled when the scope's own task is cancelled", function()
      local log, h = {}, nil
      h = cosock.spawn(function()
        scope.run(function(s)
          s:spawn(function()
            local ok, e = pcall(forever)
            log[#log + 1] = "child " .. tostring(e)
          end)
          local ok, e = pcall(forever)
          log[#log + 1] = "fn " .. tostring(e)
          error(e, 0)
        end)
        log[#log + 1] = "not reached"
      end, "owner")
      cosock.spawn(function() sleep(0.01); h:cancel() end, "canceller")
      net.run()
      table.sort(log)
      assert.same({ "child cosock.scope: cancelled", "fn cosock.scope: cancelled" }, log)
      assert.is_false(h:is_alive())
      net.assert_clean()
    end)

    it("a task that catches the cancellation and goes on is dropped after the grace", function()
      local tries = 0
      local r = in_task(function()
        return scope.run({ grace = 0.05 }, function(s)
          s:spawn(function()
            while true do
              pcall(sleep, 1)
              tries = tries + 1
            end
          end, "stubborn")
          sleep(0)
          s:cancel()
          return "done"
        end)
      end)
      assert.same(pack(true, "done"), r)
      assert.is_true(tries > 0)
      net.assert_clean()
    end)

    it("cancels a task waiting on a socket, and its cleanup closes it", function()
      local closed
      local r = in_task(function()
        local c, srv = net.pair()
        return scope.timeout(0.05, function()
          local ok, e = pcall(c.receive, c)
          c:close(); srv:close()
          closed = e
          error(e, 0)
        end)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.equal(CANCELLED, closed)
      net.assert_clean()
    end)

    it("runs Lua 5.4's to-be-closed variables as the cancellation unwinds", function()
      if _VERSION ~= "Lua 5.4" then return end
      local closed = {}
      local body = load([[
        local forever, closed = ...
        local x <close> = setmetatable({}, { __close = function(_, e) closed[#closed + 1] = e end })
        forever()
      ]])
      local r = in_task(function()
        return scope.timeout(0.01, body, forever, closed)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.same({ CANCELLED }, closed)
    end)

    it("outside scopes handle:cancel() drops a task on the spot, as cosock does", function()
      local ran = false
      local h = cosock.spawn(function()
        local ok = pcall(sleep, 10)
        ran = true
      end, "plain")
      cosock.spawn(function() sleep(0); h:cancel() end)
      net.run()
      assert.is_false(ran)
      net.assert_clean()
    end)
  end)

  describe("deadlines", function()
    it("scope.timeout returns fn's results when it ends in time", function()
      local r = in_task(function()
        return scope.timeout(5, function(a) sleep(0); return a, "b" end, "a")
      end)
      assert.same(pack("a", "b"), r)
    end)

    it("scope.timeout returns nil, \"timeout\" after everything in it was cancelled and cleaned up", function()
      local log = {}
      local r = in_task(function()
        local res = pack(scope.timeout(0.02, function()
          scope.run(function(s)
            s:spawn(function()
              local ok, e = pcall(forever)
              log[#log + 1] = "child"
            end)
            s:defer(function() log[#log + 1] = "defer" end)
            forever()
          end)
        end))
        log[#log + 1] = "after"
        return unpack(res, 1, res.n)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.same({ "child", "defer", "after" }, log)
    end)

    it("scope.timeout raises fn's error again", function()
      local r = in_task(function() return pcall(scope.timeout, 1, function() error("bad", 0) end) end)
      assert.same(pack(false, "bad"), r)
    end)

    it("run with a timeout option returns false, \"timeout\" when its deadline passed first", function()
      local r = in_task(function()
        return scope.run({ timeout = 0.02 }, function(s)
          s:spawn(forever)
          return "fn ended"
        end)
      end)
      assert.same(pack(false, "timeout"), r)
    end)

    it("every blocking call inside obeys the nearest deadline without being given one", function()
      local got = {}
      in_task(function()
        scope.run({ timeout = 10 }, function(s)
          local ok, e = pcall(scope.timeout, 0.02, function()
            local ok2, e2 = pcall(forever)
            got[#got + 1] = e2
            local ok3, e3 = pcall(function() local c = cosock.channel.new(); return select(2, cosock.channel.new()):receive(30) end)
            got[#got + 1] = e3
          end)
          got[#got + 1] = s:deadline() ~= nil
        end)
      end)
      assert.same({ CANCELLED, CANCELLED, true }, got)
    end)

    it("nested deadlines: the earlier one applies, the outer one still after the inner ended", function()
      local r = in_task(function()
        local inner = pack(scope.timeout(10, function()
          return scope.timeout(0.01, forever)
        end))
        local outer = pack(scope.timeout(0.02, function()
          scope.timeout(10, function() sleep(0) end)
          forever()
        end))
        return inner, outer
      end)
      assert.same(pack(nil, "timeout"), r[1])
      assert.same(pack(nil, "timeout"), r[2])
    end)

    it("an outer deadline passing inside an inner scope reaches the outer one", function()
      local r = in_task(function()
        return scope.timeout(0.02, function()
          local res = pack(scope.run(function() forever() end))
          return "inner returned", res[2]
        end)
      end)
      assert.same(pack(nil, "timeout"), r)
    end)

    it("a task the loop drops (a bad yield) fails its scope, which still ends", function()
      local r
      cosock.spawn(function()
        r = pack(scope.run(function(s)
          s:spawn(function() coroutine.yield(nil, nil, {}) end, "bad")
          forever()
        end))
      end, "owner")
      local ok, err = pcall(cosock.run) -- the bad yield ends run, as for any task
      assert.is_false(ok)
      assert.truthy(tostring(err):find("invalid timeout", 1, true))
      net.run()
      assert.same(pack(false, "cosock.scope: task bad was dropped by the loop"), r)
      net.assert_clean()
    end)

    it("checks its options", function()
      local r = in_task(function()
        return pcall(scope.run, { timeout = "x" }, function() end)
      end)
      assert.is_false(r[1])
      assert.truthy(r[2]:find("option timeout must be a number", 1, true))
      r = in_task(function() return pcall(scope.timeout, nil, function() end) end)
      assert.is_false(r[1])
      assert.truthy(r[2]:find("bad argument #1 to 'timeout'", 1, true))
    end)
  end)

  it("examples/scope_reconnect.lua prints what its header says", function()
    local L = require "spec.support.loop"
    local out, ok, err = L.capture(dofile, "examples/scope_reconnect.lua")
    assert(ok, err)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    -- the refused attempts before the server is up depend on timing
    while lines[1] and lines[1]:find("connection refused", 1, true) do table.remove(lines, 1) end
    assert.same({
      lines[1], -- "attempt <n>: connected, got: hello"
      "reconnect: hello",
      "gave up: timeout",
      "reader cleanup: cosock.scope: cancelled (socket closed)",
      "deferred: scope ends",
      "scope: false parser failed",
      "failed in: task 'parser'",
    }, lines)
    assert.truthy(lines[1]:find("^attempt %d+: connected, got: hello$"))
    net.assert_clean()
  end)

  describe("in the middle of a TLS handshake #luasec", function()
    local certs
    setup(function() certs = require("spec.support.certs").generate() end)
    teardown(function() certs.cleanup() end)

    it("a deadline ends the handshake's wait; cleanup closes the socket", function()
      local log = {}
      local r = in_task(function()
        local c, s = net.pair()
        local res = pack(scope.timeout(0.05, function()
          local ss = assert(cosock.ssl.wrap(s, certs.server_config()))
          local ok, e = pcall(ss.dohandshake, ss) -- the client never speaks
          ss:close()
          log[#log + 1] = e
          error(e, 0)
        end))
        c:close()
        return unpack(res, 1, res.n)
      end)
      assert.same(pack(nil, "timeout"), r)
      assert.same({ CANCELLED }, log)
      net.assert_clean()
    end)
  end)
end)
