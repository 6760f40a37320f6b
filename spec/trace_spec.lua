-- cosock.trace: the recording of the loop's events (doc/reference.md,
-- "cosock.trace"): every event kind and wake cause, the bounded buffer, the
-- file format, COSOCK_TRACE, the argument errors, and a simulated run's trace
-- being the same for the same seed. Time-dependent parts run on cosock.sim's
-- virtual clock; the real sockets are loopback ones that never wait long.

local cosock = require "cosock"
local core = require "cosock.core"
local trace = require "cosock.trace"
local net = require "spec.support.net"
local child = require "spec.support.child"

local socket = cosock.socket

-- The events of kind (and of task when given).
local function of(events, kind, task)
  local out = {}
  for _, e in ipairs(events) do
    if e.kind == kind and (task == nil or e.task == task) then out[#out + 1] = e end
  end
  return out
end

-- The id of the task named name (its spawn event).
local function id_named(events, name)
  for _, e in ipairs(events) do
    if e.kind == "spawn" and e.name == name then return e.task end
  end
  error("no task named " .. name)
end

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return tostring(err)
end

-- Runs spawn_tasks() and the loop under a trace; returns the events.
local function traced(spawn_tasks, opts)
  trace.start(opts)
  spawn_tasks()
  local ok, err = pcall(cosock.run)
  trace.stop()
  return trace.events(), ok, err
end

describe("cosock.trace", function()
  before_each(function()
    trace.stop()
    cosock.reset()
  end)
  after_each(function()
    trace.stop()
    cosock.reset()
  end)

  describe("events", function()
    it("records a client/server exchange over loopback: waits on fds, wakes by readiness", function()
      local srv, port = net.listen(1)
      local sfd = math.floor(srv:getfd())
      local events = traced(function()
        cosock.spawn(function()
          local c = assert(srv:accept())
          c:settimeout(net.TIMEOUT)
          assert(c:send(assert(c:receive()) .. "!\n"))
          c:close()
          srv:close()
        end, "server")
        cosock.spawn(function()
          local c = assert(socket.tcp())
          c:settimeout(net.TIMEOUT)
          assert(c:connect("127.0.0.1", port))
          assert(c:send("hi\n"))
          assert.equal("hi!", c:receive())
          c:close()
        end, "client")
      end)
      local server = id_named(events, "server")
      local client = id_named(events, "client")
      assert.equal(1, server)
      assert.equal(2, client)
      -- The server's first wait: its listening socket's fd, for reading.
      local waits = of(events, "wait", server)
      assert.equal("recv", waits[1].what)
      assert.equal("fd " .. sfd, waits[1].detail)
      -- Its wake: that fd was ready, by no task.
      local wakes = of(events, "wake", server)
      assert.equal("spawn", wakes[1].cause)
      assert.equal("ready", wakes[2].cause)
      assert.equal(0, wakes[2].by)
      assert.equal("fd " .. sfd .. " recv", wakes[2].detail)
      -- Every wake after a wait on a socket is a readiness of one of its fds.
      for _, id in ipairs({ server, client }) do
        for i, w in ipairs(of(events, "wake", id)) do
          if i > 1 then
            assert.equal("ready", w.cause)
            assert.matches("^fd %d+ [rs][ec][cn]", w.detail)
          end
        end
        local e = of(events, "end", id)
        assert.equal(1, #e)
        assert.equal("returned", e[1].how)
      end
      -- The polls: their time, how long they slept, what came back.
      local polls = of(events, "poll")
      assert.is_true(#polls >= 1)
      for _, p in ipairs(polls) do
        assert.equal(0, p.task)
        assert.is_true(p.slept >= 0)
        assert.is_true(p.nready >= 0)
      end
      assert.is_true(polls[1].nready >= 1)
    end)

    it("orders a task's events: spawn, wake (spawn), run, wait, wake, run, end", function()
      local events = traced(function()
        cosock.spawn(function() socket.sleep(0) end, "a")
      end)
      local kinds = {}
      for _, e in ipairs(events) do
        if e.task == 1 then kinds[#kinds + 1] = e.kind end
      end
      assert.same({ "spawn", "wake", "run", "wait", "wake", "run", "end" }, kinds)
      local times = {}
      for i, e in ipairs(events) do
        times[i] = e.t
        if i > 1 then assert.is_true(e.t >= times[i - 1]) end
      end
    end)

    it("records a spawn's parent, name and site", function()
      local line
      local events = traced(function()
        cosock.spawn(function()
          line = debug.getinfo(1, "l").currentline + 1
          cosock.spawn(function() end, "child")
        end, "parent")
      end)
      local spawn = of(events, "spawn", id_named(events, "child"))[1]
      assert.equal(id_named(events, "parent"), spawn.parent)
      assert.matches("trace_spec.lua:" .. line .. "$", spawn.site)
      local wake = of(events, "wake", spawn.task)[1]
      assert.equal("spawn", wake.cause)
      assert.equal(spawn.parent, wake.by)
      assert.equal(0, of(events, "spawn", id_named(events, "parent"))[1].parent)
    end)

    it("records a name that is not a string without calling its metamethods", function()
      local called = false
      local name = setmetatable({}, { __tostring = function() called = true; return "x" end })
      local events = traced(function()
        cosock.spawn(function() end, 7)
        cosock.spawn(function() end, name)
        cosock.spawn(function() end)
      end)
      local spawns = of(events, "spawn")
      assert.equal("7", spawns[1].name)
      assert.matches("^table: ", spawns[2].name)
      assert.is_false(called)
      assert.is_nil(spawns[3].name)
    end)

    it("records a channel send and close as the wake causes, by the sending task", function()
      local events = traced(function()
        local tx, rx = cosock.channel.new()
        cosock.spawn(function()
          assert.equal(1, rx:receive())
          assert.same({ nil, "closed" }, { rx:receive() })
        end, "receiver")
        cosock.spawn(function()
          tx:send(1)
          socket.sleep(0)
          tx:close()
        end, "sender")
      end)
      local r, s = id_named(events, "receiver"), id_named(events, "sender")
      local waits = of(events, "wait", r)
      assert.equal("channel-recv", waits[1].what)
      assert.equal("channel-recv", waits[2].what)
      local wakes = of(events, "wake", r)
      assert.equal("send", wakes[2].cause)
      assert.equal(s, wakes[2].by)
      assert.equal("close", wakes[3].cause)
      assert.equal(s, wakes[3].by)
    end)

    it("records a socket's close as the wake cause, with set_close_wakes(true)", function()
      cosock.set_close_wakes(true)
      local events = traced(function()
        cosock.spawn(function()
          local c, s = net.pair()
          cosock.spawn(function() c:close(); s:close() end, "closer")
          assert.is_nil(c:receive())
        end, "reader")
      end)
      cosock.set_close_wakes(false)
      local reader, closer = id_named(events, "reader"), id_named(events, "closer")
      local wakes = of(events, "wake", reader)
      local last = wakes[#wakes]
      assert.equal("close", last.cause)
      assert.equal(closer, last.by)
    end)

    it("records a sleep and the timer that ends it, and the timers fired (virtual clock)", function()
      trace.start()
      net.run_virtual(function()
        cosock.spawn(function() socket.sleep(0.5) end, "sleeper")
      end)
      trace.stop()
      local events = trace.events()
      local wait = of(events, "wait", 1)[1]
      assert.equal("sleep", wait.what)
      assert.equal(0.5, wait.timeout)
      local wake = of(events, "wake", 1)[2]
      assert.equal("timer", wake.cause)
      assert.equal(0, wake.by)
      assert.is_true(math.abs(wake.t - wait.t - 0.5) < 1e-6)
      local timers = of(events, "timers")
      assert.equal(1, #timers)
      assert.equal(1, timers[1].count)
      assert.equal(0, timers[1].task)
    end)

    it("records a wait on a timer object as 'timer' and a select as 'select'", function()
      local events = traced(function()
        cosock.spawn(function()
          local t = cosock.timer.create_oneshot(0.001)
          socket.select({ t }, nil, 1)
          local tx, rx = cosock.channel.new()
          local t2 = cosock.timer.create_oneshot(0.001)
          socket.select({ rx, t2 }, nil, 1)
          tx:close()
        end, "t")
      end)
      local waits = of(events, "wait", 1)
      assert.equal("timer", waits[1].what)
      assert.equal(1, waits[1].timeout)
      assert.equal("select", waits[2].what)
      assert.equal("object recv, object recv", waits[2].detail)
    end)

    it("records a wait on a lock and on a signal, and who woke them", function()
      local sync = require "cosock.sync"
      local signal = require "cosock.signal"
      local events = traced(function()
        local lock = sync.lock()
        cosock.spawn(function()
          lock:acquire()
          socket.sleep(0)
          lock:release()
          signal.one("go")
        end, "holder")
        cosock.spawn(function()
          lock:acquire()
          lock:release()
        end, "waiter")
        cosock.spawn(function() signal.wait("go") end, "signalled")
      end)
      local waiter, holder = id_named(events, "waiter"), id_named(events, "holder")
      local sig = id_named(events, "signalled")
      assert.equal("lock", of(events, "wait", waiter)[1].what)
      local lwake = of(events, "wake", waiter)[2]
      assert.equal("other", lwake.cause)   -- (a waker called by the releasing task)
      assert.equal(holder, lwake.by)
      assert.equal("signal", of(events, "wait", sig)[1].what)
      local swake = of(events, "wake", sig)[2]
      assert.equal("signal", swake.cause)
      assert.equal(holder, swake.by)
    end)

    it("records a bare yield as 'yield'", function()
      local events, ok = traced(function()
        cosock.spawn(function() coroutine.yield() end, "y")
      end)
      assert.is_false(ok)                    -- (nothing can wake it: the stall)
      assert.equal("yield", of(events, "wait", 1)[1].what)
    end)

    it("records a join's wake, by the task that ended", function()
      local events = traced(function()
        local h = cosock.spawn(function() socket.sleep(0) end, "joined")
        cosock.spawn(function() assert(h:join()) end, "joiner")
      end)
      local joiner, joined = id_named(events, "joiner"), id_named(events, "joined")
      assert.equal("join", of(events, "wait", joiner)[1].what)
      local wake = of(events, "wake", joiner)[2]
      assert.equal("join", wake.cause)
      assert.equal(joined, wake.by)
    end)

    it("records a predicate's wake", function()
      local when = require "cosock.when"
      local flag = false
      local events = traced(function()
        cosock.spawn(function() when.wait(function() return flag end) end, "waiter")
        cosock.spawn(function() socket.sleep(0); flag = true end, "setter")
      end)
      assert.equal("predicate", of(events, "wait", 1)[1].what)
      assert.equal("predicate", of(events, "wake", 1)[2].cause)
    end)

    it("records a name lookup's wait and its wake 'lookup' (c-ares)", function()
      if core.dns ~= "c-ares" then return end -- (without c-ares a lookup blocks: no wait)
      local dns_server = require "spec.support.dns_server"
      trace.start()
      local waits_before
      dns_server.session({ ["a.test"] = { a = { "127.0.0.1" } } }, function(_, dns)
        waits_before = #of(trace.events(), "wait", 1)
        assert.equal("127.0.0.1", dns.toip("a.test")) -- (in the session's task, 1)
      end)
      trace.stop()
      assert(cosock.socket.dns.configure { servers = { dns_server.NOWHERE } })
      local events = trace.events()
      assert.equal("dns session", of(events, "spawn", 1)[1].name)
      local wait = of(events, "wait", 1)[waits_before + 1]
      assert.equal("lookup", wait.what)
      local wake = of(events, "wake", 1)[waits_before + 2]
      assert.equal("lookup", wake.cause)
      assert.equal(0, wake.by)
    end)

    it("records a scope's cancellation: the wake 'cancel' by the cancelling task, the end 'cancelled'", function()
      local scope = require "cosock.scope"
      trace.start()
      net.run_virtual(function()
        cosock.spawn(function()
          scope.run(function(s)
            s:spawn(function() socket.sleep(10) end, "sleeper")
            s:spawn(function()
              socket.sleep(0.01)
              s:cancel()
            end, "canceller")
          end)
        end, "main")
      end)
      trace.stop()
      local events = trace.events()
      local sleeper, canceller = id_named(events, "sleeper"), id_named(events, "canceller")
      local main = id_named(events, "main")
      assert.equal("scope", of(events, "wait", main)[1].what)
      local wake = of(events, "wake", sleeper)[2]
      assert.equal("cancel", wake.cause)
      assert.equal(canceller, wake.by)
      assert.equal("cancelled", of(events, "end", sleeper)[1].how)
      assert.equal("returned", of(events, "end", canceller)[1].how)
    end)

    it("records a raised error as the end 'raised', with the message", function()
      local events, ok, err = traced(function()
        cosock.spawn(function() error("boom") end, "raiser")
      end)
      assert.is_false(ok)
      assert.matches("boom", err)
      local e = of(events, "end", 1)[1]
      assert.equal("raised", e.how)
      assert.matches("trace_spec.lua:%d+: boom$", e.error)
      -- a non-string error is written as text
      events = traced(function()
        cosock.set_error_handler(function() end)
        cosock.spawn(function() error({}) end, "table")
      end)
      assert.matches("^table", of(events, "end", 1)[1].error)
    end)

    it("records a task dropped by handle:cancel() as the end 'dropped'", function()
      local events = traced(function()
        local h = cosock.spawn(function() socket.sleep(10) end, "victim")
        cosock.spawn(function() h:cancel() end, "killer")
      end)
      local e = of(events, "end", 1)
      assert.equal(1, #e)
      assert.equal("dropped", e[1].how)
    end)

    it("shows a deadlock: each task's last event is its wait, nothing woke them", function()
      local events, ok, err = traced(function()
        local tx1, rx1 = cosock.channel.new()
        local tx2, rx2 = cosock.channel.new()
        cosock.spawn(function() rx1:receive(); tx2:send(1) end, "a")
        cosock.spawn(function() rx2:receive(); tx1:send(1) end, "b")
      end)
      assert.is_false(ok)
      assert.matches("no sockets", err)
      for _, id in ipairs({ 1, 2 }) do
        local mine = {}
        for _, e in ipairs(events) do if e.task == id then mine[#mine + 1] = e end end
        assert.equal("wait", mine[#mine].kind)
        assert.equal("channel-recv", mine[#mine].what)
        assert.equal(1, #of(events, "wake", id)) -- (its spawn's only)
        assert.equal(0, #of(events, "end", id))
      end
    end)

    it("gives tasks spawned before start their ids at start, parent 0", function()
      cosock.spawn(function() socket.sleep(0) end, "early")
      trace.start()
      cosock.run()
      trace.stop()
      local events = trace.events()
      assert.equal("spawn", events[1].kind)
      assert.equal("early", events[1].name)
      assert.equal(0, events[1].parent)
      assert.equal(1, events[1].task)
    end)
  end)

  describe("the buffer", function()
    it("keeps the first size events and counts the rest", function()
      trace.start({ size = 16 })
      cosock.spawn(function() for _ = 1, 20 do socket.sleep(0) end end, "busy")
      cosock.run()
      local s = trace.stats()
      assert.equal(16, s.size)
      assert.equal(16, s.recorded)
      assert.is_true(s.dropped > 20)
      assert.is_true(s.on)
      trace.stop()
      assert.is_false(trace.stats().on)
      local events = trace.events()
      assert.equal(16, #events)
      assert.equal("spawn", events[1].kind)
    end)

    it("stops (idempotently) keeping what it recorded; start clears it", function()
      trace.start()
      assert.is_true(trace.on())
      cosock.spawn(function() end, "x")
      cosock.run()
      trace.stop()
      trace.stop()
      assert.is_false(trace.on())
      local n = #trace.events()
      assert.is_true(n > 0)
      cosock.spawn(function() end, "y")
      cosock.run()
      assert.equal(n, #trace.events())
      trace.start()
      assert.equal(0, #trace.events())
      assert.equal(0, trace.stats().recorded)
    end)

    it("is gone after reset()", function()
      trace.start({ size = 32 })
      assert.is_function(core.trace_wait)
      assert.is_function(core.trace_wake)
      cosock.reset()
      assert.is_false(trace.on())
      assert.is_nil(core.trace_wait)
      assert.is_nil(core.trace_wake)
      assert.same({ size = 0, recorded = 0, dropped = 0, on = false }, trace.stats())
      assert.same({}, trace.events())
      trace.start({ size = 16 })
      assert.is_true(trace.on())
    end)
  end)

  describe("without memory", function()
    it("refuses a buffer it cannot have, and the loop goes on", function()
      -- (85 GB: more than the machine's memory, refused without a try, so
      -- under ASan too, whose allocator aborts instead of failing)
      assert.matches("cosock.trace.start: out of memory %(a buffer of 2147483647 events%)",
        err_of(trace.start, { size = 2147483647 }))
      assert.is_false(trace.on())
      assert.same({ size = 0, recorded = 0, dropped = 0, on = false }, trace.stats())
      trace.start({ size = 16 })
      cosock.spawn(function() socket.sleep(0) end, "after")
      cosock.run()
      local events = trace.events()
      assert.equal("spawn", events[1].kind)
      assert.equal("returned", events[#events].how)
    end)
  end)

  describe("mark and task_id", function()
    it("records notes, with the running task by default", function()
      assert.is_false(trace.mark("warn-turn", "off"))
      local inside
      local events = traced(function()
        assert.is_true(trace.mark("main", "from the program"))
        cosock.spawn(function()
          inside = trace.task_id()
          trace.mark("warn-turn", "took long")
          trace.mark("other", "for task 7", 7)
        end, "t")
      end)
      assert.equal(1, inside)
      local notes = of(events, "note")
      assert.same({ "main", "from the program", 0 }, { notes[1].what, notes[1].detail, notes[1].task })
      assert.same({ "warn-turn", "took long", 1 }, { notes[2].what, notes[2].detail, notes[2].task })
      assert.equal(7, notes[3].task)
    end)

    it("gives a task's id by its coroutine, nil for others", function()
      trace.start()
      local co
      cosock.spawn(function()
        co = coroutine.running()
        socket.sleep(0)
      end, "a")
      cosock.spawn(function()
        assert.equal(1, trace.task_id(co))
        assert.equal(2, trace.task_id())
        assert.is_nil(trace.task_id(coroutine.create(function() end)))
      end, "b")
      cosock.run()
      assert.is_nil(trace.task_id())
    end)
  end)

  describe("save", function()
    it("writes the file format: header, meta, one escaped line per event", function()
      local path = os.tmpname()
      trace.start({ size = 100 })
      cosock.spawn(function()
        trace.mark("tab\there", "line\nbreak\rcr\\back")
        socket.sleep(0)
      end, "saver")
      cosock.run()
      trace.save(path)   -- (while on)
      trace.stop()
      local f = assert(io.open(path))
      local text = f:read("*a")
      f:close()
      os.remove(path)
      local lines = {}
      for l in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
      assert.equal("cosock-trace 1", lines[1])
      local meta, evs = {}, {}
      for i = 2, #lines do
        local k, v = lines[i]:match("^M\t([^\t]+)\t(.*)$")
        if k then meta[k] = v else evs[#evs + 1] = lines[i] end
      end
      assert.equal("real", meta.clock)
      assert.equal("100", meta.size)
      assert.equal("0", meta.dropped)
      assert.equal(_VERSION, meta.lua)
      assert.matches("^%d+$", meta.started)
      assert.equal(tonumber(meta.recorded), #evs)
      assert.matches("^E\t%d+%.%d%d%d%d%d%d%d%d%d\tspawn\t1\t0\tsaver\t[^\t]+trace_spec%.lua:%d+$", evs[1])
      assert.matches("^E\t%d+%.%d+\twake\t1\tspawn\t0\t%-$", evs[2])
      assert.matches("^E\t%d+%.%d+\trun\t1$", evs[3])
      assert.equal("note\t1\ttab\\there\tline\\nbreak\\rcr\\\\back",
        evs[4]:match("^E\t[%d.]+\t(.*)$"))
      assert.matches("^E\t[%d.]+\twait\t1\tsleep\t%-\t0%.000000000$", evs[5])
      assert.matches("^E\t[%d.]+\tend\t1\treturned\t%-$", evs[#evs])
    end)

    it("writes a long trace whole (it is written a part at a time)", function()
      local path = os.tmpname()
      trace.start({ size = 20000 })
      cosock.spawn(function() for _ = 1, 3000 do socket.sleep(0) end end, "long")
      cosock.run()
      trace.stop()
      local recorded = trace.stats().recorded
      assert.is_true(recorded > 2 * 4096)
      trace.save(path)
      local n, last = 0, nil
      for line in io.lines(path) do
        if line:find("^E\t") then n = n + 1 end
        last = line
      end
      os.remove(path)
      assert.equal(recorded, n)
      assert.matches("\tend\t1\treturned\t%-$", last)
    end)

    it("writes poll events with the time slept", function()
      local path = os.tmpname()
      local srv = net.listen(1)
      trace.start()
      cosock.spawn(function()
        srv:settimeout(0.001)
        srv:accept()
        srv:close()
      end, "poller")
      cosock.run()
      trace.stop()
      trace.save(path)
      local f = assert(io.open(path))
      local text = f:read("*a")
      f:close()
      os.remove(path)
      assert.matches("\nE\t[%d.]+\tpoll\t0\t%d+%.%d%d%d%d%d%d%d%d%d\t%d+\n", text)
      assert.matches("\nE\t[%d.]+\twait\t1\trecv\tfd %d+\t0%.001000000\n", text)
    end)
  end)

  describe("arguments", function()
    it("are checked, with the function named", function()
      assert.matches("bad argument #1 to 'cosock.trace.start' %(table or nil expected, got 5%)",
        err_of(trace.start, 5))
      assert.matches("opts.size must be an integer from 16", err_of(trace.start, { size = 15 }))
      assert.matches("opts.size must be an integer from 16.*got 16.5", err_of(trace.start, { size = 16.5 }))
      assert.matches("got \"x\"", err_of(trace.start, { size = "x" }))
      assert.matches("got NaN", err_of(trace.start, { size = 0 / 0 }))
      trace.start({ size = 16 })
      assert.matches("a trace is on already", err_of(trace.start))
      assert.is_true(trace.on())                -- (the first goes on)
      assert.matches("bad argument #1 to 'cosock.trace.mark' %(string expected, got nil%)",
        err_of(trace.mark))
      assert.matches("bad argument #2 to 'cosock.trace.mark' %(string or number expected, got table%)",
        err_of(trace.mark, "k", {}))
      assert.matches("bad argument #3 to 'cosock.trace.mark' %(task id", err_of(trace.mark, "k", "m", -1))
      assert.matches("bad argument #3 to 'cosock.trace.mark' %(task id", err_of(trace.mark, "k", "m", 1.5))
      assert.matches("bad argument #1 to 'cosock.trace.task_id' %(coroutine or nil expected, got 1%)",
        err_of(trace.task_id, 1))
      assert.matches("bad argument #1 to 'cosock.trace.save' %(string expected, got nil%)",
        err_of(trace.save))
      assert.matches("cosock.trace.save: cannot write the trace: ", err_of(trace.save, "/nonexistent/dir/t"))
      -- the errors are the caller's
      assert.matches("^[^:]*trace_spec.lua:%d+: bad argument", err_of(function() trace.mark() end))
    end)
  end)

  describe("under cosock.sim", function()
    it("is the same for two runs with the same seed", function()
      local sim = require "cosock.sim"
      local function once()
        cosock.reset()
        sim.on({ seed = 42 })
        trace.start()
        local tx, rx = cosock.channel.new()
        for i = 1, 5 do
          cosock.spawn(function()
            socket.sleep(0.01 * i)
            tx:send(i)
            socket.sleep(0)
          end, "w" .. i)
        end
        cosock.spawn(function()
          local srv = assert(socket.bind("10.0.0.1", 80))
          local c = assert(srv:accept())
          c:send(assert(c:receive()) .. "\n")
          c:close()
          srv:close()
        end, "server")
        cosock.spawn(function()
          for _ = 1, 5 do rx:receive() end
          local c = assert(socket.tcp())
          assert(c:connect("10.0.0.1", 80))
          c:send("x\n")
          c:receive()
          c:close()
        end, "client")
        cosock.run()
        trace.stop()
        sim.off()
        return trace.events(), trace.stats()
      end
      local a, sa = once()
      local b, sb = once()
      assert.is_true(#a > 40)
      assert.same(a, b)
      assert.same(sa, sb)
    end)

    it("records each jump of the virtual clock as a poll that slept that long", function()
      local sim = require "cosock.sim"
      cosock.reset()
      sim.on()
      trace.start()
      cosock.spawn(function()
        socket.sleep(2.5)
        socket.sleep(60)
      end, "sleeper")
      local ok, err = pcall(cosock.run)
      trace.stop()
      sim.off()
      assert(ok, err)
      local polls = of(trace.events(), "poll")
      assert.equal(2, #polls)
      assert.equal(2.5, polls[1].slept)
      assert.equal(60, polls[2].slept)
      assert.equal(0, polls[1].nready)
      assert.equal(2.5, polls[2].t - polls[1].t)
    end)
  end)

  describe("COSOCK_TRACE", function()
    local function read(path)
      local f = io.open(path)
      if not f then return nil end
      local text = f:read("*a")
      f:close()
      os.remove(path)
      return text
    end

    it("traces a program unchanged, saved when run returns", function()
      local path = os.tmpname()
      local out = child.run([[
        local cosock = require "cosock"
        cosock.spawn(function() cosock.socket.sleep(0) end, "envtask")
        cosock.run()
        print("loaded", package.loaded["cosock.trace"] ~= nil)
        local f = io.open(os.getenv("COSOCK_TRACE"))
        print("saved", f:read("*a"):find("\tspawn\t1\t0\tenvtask\t", 1, true) ~= nil)
        f:close()
      ]], "COSOCK_TRACE=" .. path .. " COSOCK_TRACE_SIZE=16 ")
      assert.matches("loaded\ttrue", out)
      assert.matches("saved\ttrue", out)
      local text = read(path)
      assert.matches("^cosock%-trace 1\n", text)
      assert.matches("\nM\tsize\t16\n", text)
    end)

    it("is saved when run raises, and when the state closes (a step host)", function()
      local path = os.tmpname()
      local out = child.run([[
        local cosock = require "cosock"
        cosock.spawn(function() error("kaboom") end, "raiser")
        print(pcall(cosock.run))
        local f = io.open(os.getenv("COSOCK_TRACE"))
        print("raised", (f:read("*a"):find("\tend\t1\traised\t", 1, true)) ~= nil)
        f:close()
        cosock.spawn(function() end, "stepped")
        cosock.step(0)
        cosock.step(0)
      ]], "COSOCK_TRACE=" .. path .. " ")
      assert.matches("raised\ttrue", out)
      local text = read(path)
      assert.matches("\tspawn\t2\t0\tstepped\t", text, 1, true)
      assert.matches("\tend\t2\treturned\t%-\n", text)
    end)

    it("goes on, from a new trace, after the program's reset()", function()
      local path = os.tmpname()
      child.run([[
        local cosock = require "cosock"
        cosock.spawn(function() end, "before")
        cosock.run()
        cosock.reset()
        cosock.spawn(function() end, "after")
        cosock.run()
      ]], "COSOCK_TRACE=" .. path .. " ")
      local text = read(path)
      assert.matches("\tspawn\t1\t0\tafter\t", text)
      assert.is_nil(text:find("before", 1, true))
    end)

    it("is not loaded without the variable", function()
      local out = child.run([[
        require "cosock"
        print("loaded", package.loaded["cosock.trace"] ~= nil, require("cosock.core").trace_start ~= nil)
      ]], "COSOCK_TRACE= ")
      assert.matches("loaded\tfalse\tfalse", out)
    end)

    it("says what is wrong with COSOCK_TRACE_SIZE (too small, too big)", function()
      local out = child.run([[
        print(pcall(require, "cosock"))
      ]], "COSOCK_TRACE=/dev/null COSOCK_TRACE_SIZE=3 ")
      assert.matches("COSOCK_TRACE_SIZE must be an integer from 16 to 2147483647, got \"3\"", out)
      out = child.run([[
        print(pcall(require, "cosock"))
      ]], "COSOCK_TRACE=/dev/null COSOCK_TRACE_SIZE=3000000000 ")
      assert.matches("COSOCK_TRACE_SIZE must be an integer from 16 to 2147483647, got \"3000000000\"", out)
    end)
  end)
end)
