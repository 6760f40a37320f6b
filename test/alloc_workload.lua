-- test/alloc_workload.lua: the workload of the allocation-failure sweep
-- (test/alloc_sweep_test.c), also usable on its own:
--   LUA_PATH='lua/?.lua;;' LUA_CPATH='build/src/cpath/?.so;;' lua5.3 test/alloc_workload.lua
--
-- It returns a table W:
--   W.prepare()  called with allocation on: makes the table of handles big
--                enough that recording a handle never allocates (so every
--                task that exists can be cancelled afterwards).
--   W.run()      the workload; returns true when every section did what it
--                should, raises otherwise. The sweep runs it with an allocator
--                that fails after N allocations.
--   W.cancel_all()  cancels every task the workload spawned (for the checks
--                after a failed run).
--   W.park_some(), W.receive_in_pcall(), W.error_handler()  the other sweeps' pieces (see
--                test/alloc_sweep_test.c).
--
-- Each section spawns its tasks; one cosock.run() then drives all of them.
-- Every wait has a time limit, so a run that lost a wake to a failed
-- allocation still ends. New features add a section to SECTIONS, or a
-- piece of their own when they change how run ends (see doc/reliability.md).

local cosock = require "cosock"
local socket = cosock.socket
local channel = cosock.channel
local op = require "cosock.op"
local compat = require "cosock.compat"
-- The whole run is traced (cosock.trace, loaded here with allocation on):
-- every event the sections make is recorded, so each allocation the trace
-- makes as it goes (a string kept, a task's id) is one the sweep fails. A
-- small buffer: the events past it are counted, not kept.
local trace = require "cosock.trace"

local W = {}
local MAX_TASKS = 64
local handles = { n = 0 }
local LIMIT = 10 -- seconds: no wait of a healthy run comes near it (also under valgrind on a loaded machine)
-- A scope's grace after its cancel (the default is a second): a try whose
-- allocation failure left a scope's task unable to end waits this long for
-- it in the checks after the failure. A healthy run never waits for it.
local GRACE = 0.05

function W.prepare()
  require "cosock.scope" -- (loaded with allocation on: the sweep covers their use)
  require "cosock.sync"
  require "cosock.ossignal"
  require "cosock.sim"
  require "cosock.sim.tcp" -- (what sim.on loads on first use: loaded here, the sweep covers its use)
  require "cosock.sim.udp"
  for i = 1, MAX_TASKS do handles[i] = false end
  handles.n = 0
end

-- Records a handle for cancel_all.
local function keep(h)
  if handles.n < MAX_TASKS then -- (no allocation: the slots exist)
    handles.n = handles.n + 1
    handles[handles.n] = h
  end
  return h
end

local function spawn(fn, name)
  return keep(cosock.spawn(fn, name))
end

function W.cancel_all()
  for i = 1, handles.n do handles[i]:cancel() end
  W.prepare()
end

-- TCP on 127.0.0.1: a server task accepts two clients and spawns a handler
-- per connection that echoes lines; each client sends three lines and
-- reports what came back over a channel to a collector.
local function echo(checks)
  local port
  local tx, rx = channel.new()
  spawn(function()
    local srv = assert(socket.bind("127.0.0.1", 0))
    srv:settimeout(LIMIT)
    port = select(2, srv:getsockname())
    for i = 1, 2 do
      local c = assert(srv:accept())
      c:settimeout(LIMIT)
      spawn(function()
        while true do
          local line, err = c:receive("*l")
          if not line then assert(err == "closed", err) break end
          assert(c:send(line:upper() .. "\n"))
        end
        c:close()
      end, "handler " .. i)
    end
    srv:close()
  end, "server")
  for i = 1, 2 do
    spawn(function()
      for _ = 1, 100 do if port then break end socket.sleep(0) end
      assert(port, "no port")
      local c = assert(socket.connect("127.0.0.1", port))
      c:settimeout(LIMIT)
      local got = {}
      for j = 1, 3 do
        assert(c:send("line " .. i .. "." .. j .. "\n"))
        got[j] = assert(c:receive("*l"))
      end
      c:close()
      tx:send(table.concat(got, ","))
    end, "client " .. i)
  end
  spawn(function()
    rx:settimeout(LIMIT)
    local all = {}
    for i = 1, 2 do all[i] = assert(rx:receive()) end
    table.sort(all)
    assert(all[1] == "LINE 1.1,LINE 1.2,LINE 1.3", all[1])
    assert(all[2] == "LINE 2.1,LINE 2.2,LINE 2.3", all[2])
    checks.echo = true
  end, "collector")
end

-- Sleeps, a select on a channel with a timeout, a zero timeout.
local function timers(checks)
  spawn(function()
    socket.sleep(0.001)
    local tx, rx = channel.new()
    local r, _, err = socket.select({ rx }, nil, 0.001)
    assert(r == nil and err == "timeout", err)
    tx:send("x")
    r = socket.select({ rx }, nil, LIMIT)
    assert(r and r[1] == rx)
    assert(rx:receive() == "x")
    socket.sleep(0)
    checks.timers = true
  end, "sleeper")
end

-- A task in select on a udp socket that has no descriptor yet (the loop
-- lists the wait and asks getfd() again each pass), woken by the answer to
-- another task's sendto on that socket.
local function late_fd(checks)
  local u = assert(socket.udp())
  local peer = assert(require("socket").udp())
  assert(peer:setsockname("127.0.0.1", 0))
  peer:settimeout(0)
  local ip, port = peer:getsockname()
  spawn(function()
    local r = socket.select({ u }, nil, LIMIT)
    assert(r and r[1] == u, "the late socket was not polled")
    assert(u:receive() == "pong")
    u:close()
    peer:close()
    checks.late_fd = true
  end, "late fd")
  spawn(function()
    assert(u:sendto("ping", ip, port))
    for _ = 1, 100 do -- (the peer is a plain socket: look each pass)
      local d, from, fport = peer:receivefrom()
      if d then peer:sendto("pong", from, fport) return end
      socket.sleep(0.001)
    end
    error("the peer got nothing")
  end, "late fd sender")
end

-- A select on a socket whose LuaSocket buffer holds data (a line read, the
-- next one buffered): woken after the pass's resumes from the list of such
-- waits; without memory for the list's entry the wait is woken at once.
local function buffered(checks)
  spawn(function()
    local srv = assert(socket.bind("127.0.0.1", 0))
    srv:settimeout(LIMIT)
    local c = assert(socket.connect("127.0.0.1", (select(2, srv:getsockname()))))
    c:settimeout(LIMIT)
    local s = assert(srv:accept())
    srv:close()
    s:settimeout(LIMIT)
    assert(c:send("a\nb\n"))
    assert(s:receive("*l") == "a")
    local r = socket.select({ s }, nil, LIMIT)
    assert(r and r[1] == s, "the buffered socket was not woken")
    assert(s:receive("*l") == "b")
    c:close()
    s:close()
    checks.buffered = true
  end, "buffered")
end

-- Tasks parked on a channel, a socket and a long sleep, cancelled by
-- another task; none of them may run again.
local function cancels(checks)
  local resumed = false
  local _, rx = channel.new()
  local a = spawn(function() rx:receive() resumed = true end, "on channel")
  local b = spawn(function() socket.sleep(10) resumed = true end, "asleep")
  local u = assert(socket.udp())
  assert(u:setsockname("127.0.0.1", 0))
  local c = spawn(function() u:receive() resumed = true end, "on socket")
  spawn(function()
    socket.sleep(0)
    a:cancel() b:cancel() c:cancel()
    u:close()
    socket.sleep(0)
    assert(not resumed and not a:is_alive() and not b:is_alive() and not c:is_alive())
    checks.cancels = true
  end, "canceller")
end

-- Name lookups (a build with c-ares): a DNS server task on 127.0.0.1 (the
-- specs' spec/support/dns_server.lua, its tasks spawned here so that they can
-- be cancelled), a lookup, a connect by name (both families), a lookup that
-- times out on a held answer and one whose task is cancelled.
-- A lookup that reports "memory allocation failure" ran out of memory: the
-- try ends as a memory error.
local core = require "cosock.core"
-- (loaded here, with allocation on: compiling it is not what the sweep is for)
local dns_server = core.dns == "c-ares" and require "spec.support.dns_server"

local function lookups(checks)
  if not dns_server then checks.dns = true return end
  local dns = socket.dns
  local function ok(a, b, ...)
    if a == nil and b == "memory allocation failure" then error("out of memory (lookup)") end
    assert(a, b)
    return a, b, ...
  end
  spawn(function()
    local srv = dns_server.start({
      ["a.test"] = { a = { "127.0.0.1" }, aaaa = { "::1" } },
      ["held.test"] = { a = { "127.0.0.1" }, hold = true },
    }, { spawn = spawn })
    assert(dns.configure { servers = { srv.address }, timeout = 1, tries = 2 }) -- (a loaded machine under valgrind)
    assert(ok(dns.toip("a.test")) == "127.0.0.1")
    local l = assert(socket.bind("127.0.0.1", 0))
    local c = socket.tcp()
    c:settimeout(LIMIT)
    ok(c:connect("a.test", (select(2, l:getsockname()))))
    c:close()
    l:close()
    local resumed, asked = false, srv.queries
    local victim = spawn(function() dns.toip("held.test") resumed = true end, "dns victim")
    for _ = 1, 1000 do if srv.queries > asked then break end socket.sleep(0.001) end
    victim:cancel()
    c = socket.tcp()
    c:settimeout(0.001)
    local r, err = c:connect("held.test", 1)
    if err ~= "timeout" then ok(r, err) end
    assert(r == nil and err == "timeout", err)
    c:close()
    srv:release("held.test")
    for _ = 1, 1000 do if core.dns_stats().lookups == 0 then break end socket.sleep(0.001) end
    assert(core.dns_stats().lookups == 0, "lookups left")
    assert(not resumed)
    srv:stop()
    checks.dns = true
  end, "dns")
end

-- cosock.signal and cosock.when: a waiter on a signal (one, with
-- arguments), waiters woken by all, a one-shot signal.on, a task waiting on a
-- predicate the loop evaluates, a whenever that ends after three calls, and
-- a signal_on. Every wait has a time limit (the whenever's: a deadline).
local function signals(checks)
  local signal, when = cosock.signal, cosock.when
  local x, got, ever = 0, {}, 0
  spawn(function()
    local ok, a, b = signal.wait("s1", LIMIT)
    assert(ok and a == "one" and b == nil, a)
    got.one = true
  end, "signal waiter")
  for i = 1, 2 do
    spawn(function()
      assert(signal.wait("s2", LIMIT))
      got[i] = true
    end, "all waiter " .. i)
  end
  keep(signal.on("s3", function(v) assert(v == 3) got.on = true end))
  spawn(function()
    assert(when.wait(function() return x >= 3 end, LIMIT))
    got.pred = true
  end, "predicate waiter")
  local deadline = core.monotime() + LIMIT
  keep(when.whenever(function()
      if ever >= 3 or core.monotime() > deadline then return nil end
      return x > 0
    end,
    function() ever = ever + 1 end))
  spawn(function()
    assert(signal.wait("s4", LIMIT))
    got.signal_on = true
  end, "signal_on waiter")
  keep(when.signal_on(function() return x >= 4 or core.monotime() > deadline end, "s4"))
  spawn(function()
    socket.sleep(0)
    assert(signal.one("s1", "one", nil) == 1)
    assert(signal.all("s2") == 2)
    assert(signal.one("s3", 3) == 1)
    for i = 1, 5 do x = i socket.sleep(0) end
    for _ = 1, 200 do
      if got.one and got[1] and got[2] and got.on and got.pred and got.signal_on and ever == 3 then break end
      socket.sleep(0.001)
    end
    assert(got.one and got[1] and got[2] and got.on and got.pred and got.signal_on and ever == 3)
    checks.signals = true
  end, "signaller")
end

-- A task that raises: run() raises its error, the others carry on.
local function erroring(checks)
  spawn(function() error("boom") end, "erroring")
  checks.erroring = "armed"
end

-- A bounded channel (the sender waits while it is full), join of the
-- sender's task, and a timer object waited on with select.
local function additions(checks)
  local tx, rx = channel.new(1)
  local sender = spawn(function()
    tx:settimeout(LIMIT)
    for i = 1, 3 do assert(tx:send(i)) end
    tx:close()
    return "sent", 3
  end, "bounded sender")
  spawn(function()
    rx:settimeout(LIMIT)
    local n = 0
    while rx:receive() ~= nil do n = n + 1 end
    assert(n == 3, n)
    local ok, what, count = sender:join(LIMIT)
    assert(ok == true and what == "sent" and count == 3, tostring(what))
    local t = cosock.timer.create_oneshot(0.001)
    assert(socket.select({ t }, nil, LIMIT), "the timer did not come due")
    assert(t:handled())
    checks.additions = true
  end, "joiner")
end


-- Accounting and the watchdog: busy times on (the first time, this wraps
-- the state's allocator), a hog reported by a watchdog through a reporter,
-- then the hog reads its own metadata and the loop's stats.
local function accounting(checks)
  local core = require "cosock.core"
  cosock.set_accounting(true)
  local reported = false
  cosock.set_watchdog(0.001, "report", function(r)
    if r.name == "hog" then reported = true end
  end)
  spawn(function()
    local t0 = core.monotime()
    while not reported and core.monotime() - t0 < LIMIT do end
    cosock.set_watchdog(nil)
    assert(reported, "the watchdog did not report the hog")
    local me
    for _, e in ipairs(cosock.get_thread_metadata()) do
      if e.name == "hog" then me = e end
    end
    assert(me and me.resumes == 1 and me.busy > 0 and me.allocated > 0, "no accounting")
    local st = cosock.stats()
    assert(st.passes >= 1 and st.busy >= 0, "no loop totals")
    checks.accounting = true
  end, "hog")
end

-- cosock.op: a send perform and a recv perform paired over a rendezvous, a
-- choice that times out while a with_nack branch loses (its nack fires), and
-- a cancelled perform whose offer must leave the channel's line.
local function ops(checks)
  local tx, rx = channel.new(0)
  spawn(function()
    assert(op.choice(op.send(tx, "a"), op.sleep(LIMIT)):perform() == true)
  end, "op sender")
  spawn(function()
    assert(op.choice(op.recv(rx), op.sleep(LIMIT)):perform() == "a")
    local nack
    local v = op.choice(op.recv(rx),
      op.with_nack(function(n) nack = n return op.never() end),
      op.sleep(0.001):wrap(function() return "timeout" end)):perform()
    assert(v == "timeout")
    assert(op.choice(nack:wrap(function() return "nacked" end), op.always("not")):perform() == "nacked")
    local h = spawn(function() op.choice(op.send(tx, "withdrawn"), op.sleep(LIMIT)):perform() end, "op offer")
    socket.sleep(0)
    h:cancel()
    assert(op.choice(op.recv(rx), op.always("none")):perform() == "none")
    checks.ops = true
  end, "op receiver")
end

-- Whether err is what a scope may fail with under the sweep besides its
-- own error: a memory error in a scope's task goes to the scope, and a task
-- whose wait could not be made is dropped by the loop, which fails it.
local function scope_memory_failure(err)
  local e = tostring(err)
  return e:find("memory", 1, true) or e:find("dropped by the loop", 1, true)
end

-- cosock.scope and cosock.sync: a scope whose failing task cancels one
-- waiting in line for a lock (its pcall cleanup runs), then a
-- scope.timeout that cancels a sleep. (No timing: the waiter is in line
-- before the other task fails.)
local function scopes(checks)
  local scope, sync = require "cosock.scope", require "cosock.sync"
  spawn(function()
    local lock = sync.lock()
    local ok, err = scope.run({ timeout = LIMIT, grace = GRACE }, function(s)
      assert(lock:acquire())
      s:spawn(function()
        local got, e = compat.pcall(lock.acquire, lock, LIMIT) -- cancelled in line
        if not got then error(e, 0) end
        lock:release()
      end, "waiter")
      s:spawn(function() socket.sleep(0); error("scoped", 0) end, "failer")
      socket.sleep(LIMIT)
    end)
    if lock:held() > 0 then lock:release() end -- (not held when a memory error cut fn short)
    -- (a memory error in the scope's own bookkeeping can leave it to end at
    -- its deadline)
    -- (a task's error comes with its stack and "(in task 'failer', ...)")
    local first = type(err) == "string" and err:match("^[^\n]*")
    assert(ok == false and (first == "scoped" or err == "timeout" or scope_memory_failure(err)), tostring(err))
    assert(scope.timeout(0.001, socket.sleep, LIMIT) == nil)
    checks.scopes = true
  end, "scope owner")
end

-- cosock.op over cosock.sync and cosock.scope: a choice between a lock's
-- acquire_op and a message, the lock given while the chooser waits in line
-- (a grant that commits its perform); then a scope's end as an operation.
local function scope_ops(checks)
  local scope, sync = require "cosock.scope", require "cosock.sync"
  spawn(function()
    local lock = sync.lock()
    local tx, rx = channel.new()
    local ok, s = scope.run({ timeout = LIMIT, grace = GRACE }, function(s)
      assert(lock:acquire())
      s:spawn(function()
        local got = op.choice(lock:acquire_op(), op.recv(rx)):perform()
        assert(got == true and lock:held() == 1)
        lock:release()
      end, "chooser")
      socket.sleep(0) -- (the chooser is in line)
      lock:release()
      assert(tx:send("unused"))
      return s
    end)
    if ok then
      assert(op.choice(s:wait_op(), op.sleep(LIMIT)):perform() == true)
      assert(lock:available() == 1)
    else
      assert(scope_memory_failure(s), tostring(s))
    end
    checks.scope_ops = true
  end, "scope ops")
end

-- cosock.sync's line (issue 35): a waiter that times out leaves it; a
-- waiter cancelled in line while a release comes before it runs is passed
-- over (the permit goes to the next one, the cancelled one raises); no
-- permit is lost.
local function sync_line(checks)
  local scope, sync = require "cosock.scope", require "cosock.sync"
  spawn(function()
    local sem = sync.semaphore(1)
    assert(sem:acquire())
    assert(sem:acquire(0.001) == nil) -- (a task may hold several: it waits, times out)
    local sc
    local a = spawn(function()
      local ok, err = scope.run(function(s)
        sc = s
        local got, e = compat.pcall(sem.acquire, sem, LIMIT) -- cancelled in line
        if got then sem:release() end
        if e ~= scope.cancelled then error(e, 0) end
      end)
      if not ok then error(err, 0) end -- (a memory error)
    end, "cancelled waiter")
    local b = spawn(function() assert(sem:acquire(LIMIT)); sem:release() end, "next waiter")
    socket.sleep(0) -- (both in line)
    if sc then sc:cancel() end -- (nil: its scope failed for memory)
    sem:release()
    local ok, err = a:join(LIMIT)
    if not ok then error(err, 0) end
    ok, err = b:join(LIMIT)
    if not ok then error(err, 0) end
    assert(sem:available() == 1 and tostring(sem):find("0 waiting", 1, true), tostring(sem))
    checks.sync_line = true
  end, "sync line")
end

-- cosock.ossignal (no signal is sent: the receiver's waits, close waking
-- a waiter, the receiver in select).
local function ossignals(checks)
  spawn(function()
    local rx = cosock.ossignal.receiver("USR2")
    rx:settimeout(0)
    assert(rx:receive() == nil)
    rx:settimeout(0.001)
    local v, err = rx:receive()
    assert(v == nil and err == "timeout", err)
    local r, _, e = socket.select({ rx }, nil, 0.001)
    assert(r == nil and e == "timeout", e)
    rx:settimeout(LIMIT)
    local waiter = spawn(function()
      local v2, err2 = rx:receive()
      assert(v2 == nil and err2 == "closed", err2)
    end, "signal waiter")
    socket.sleep(0)
    rx:close()
    local ok, err3 = waiter:join(LIMIT)
    if not ok then error(err3, 0) end
    checks.ossignal = true
  end, "ossignal")
end

local SECTIONS = { echo, timers, cancels, lookups, signals, erroring, additions, accounting, ops, scopes,
  scope_ops, sync_line, ossignals, late_fd, buffered }

-- cosock.sim, after the rest (it needs a loop with no task): a simulated
-- tcp exchange, a sleep of virtual minutes and a scope.timeout under the
-- virtual clock, then the real world back (sim.off; cosock.reset() does it
-- in the sweep's checks after a failed try).
local function simulated()
  local sim, scope = require "cosock.sim", require "cosock.scope"
  sim.on({ seed = 1, record = false })
  local got
  spawn(function()
    local srv = assert(socket.bind("10.0.0.1", 80))
    local c = assert(srv:accept())
    assert(c:send("hi\n"))
    c:close()
    srv:close()
  end, "sim server")
  spawn(function()
    socket.sleep(60)
    local c = assert(socket.connect("10.0.0.1", 80))
    got = assert(c:receive("*l"))
    c:close()
    assert(scope.timeout(1, socket.sleep, 3600) == nil)
  end, "sim client")
  cosock.run()
  sim.off()
  assert(got == "hi", tostring(got))
end

function W.run()
  local checks = {}
  trace.stop()
  trace.start({ size = 256 })
  for _, section in ipairs(SECTIONS) do section(checks) end
  local ok, err = pcall(cosock.run)
  assert(not ok and tostring(err):find("boom", 1, true), "run should raise boom, got: " .. tostring(err))
  cosock.run()
  assert(checks.echo and checks.timers and checks.cancels and checks.dns and checks.signals
    and checks.additions and checks.accounting and checks.ops and checks.scopes
    and checks.scope_ops and checks.sync_line and checks.ossignal and checks.late_fd and checks.buffered,
    "a section did not finish")
  local st = require("cosock.core").stats()
  assert(st.tasks == 0 and st.timers == 0 and st.fds == 0, "the loop is not empty")
  simulated()
  st = require("cosock.core").stats()
  assert(st.tasks == 0 and st.timers == 0 and st.fds == 0, "the loop is not empty after the simulation")
  trace.stop()
  local ts = trace.stats()
  assert(ts.recorded == 256 and ts.dropped > 0, "the trace kept " .. ts.recorded .. " events")
  return true
end

-- For the sweeps that act on a loop with parked tasks: tasks parked on a
-- channel, a TCP socket, a fake object and a long sleep; run() is stopped by
-- an erroring task once they are parked. Allocation on.
function W.park_some()
  local _, rx = channel.new()
  local obj = { setwaker = function() end }
  W.keep = { rx, obj }
  spawn(function()
    local srv = assert(socket.bind("127.0.0.1", 0))
    local c = assert(socket.connect("127.0.0.1", (select(2, srv:getsockname()))))
    W.keep[3], W.keep[4] = srv, c
    spawn(function() c:receive() end, "on tcp")
    spawn(function() srv:accept() srv:accept() end, "on accept")
  end, "setup")
  spawn(function() rx:receive() end, "on channel")
  spawn(function() coroutine.yield({ obj }) end, "on object")
  spawn(function() socket.sleep(3600) end, "asleep")
  spawn(function() socket.sleep(0) socket.sleep(0) error("parked") end, "stopper")
  local ok, err = pcall(cosock.run)
  assert(not ok and tostring(err):find("parked", 1, true), err)
  local st = require("cosock.core").stats()
  assert(st.tasks == 5 and st.fds == 2 and st.timers == 1,
    ("not parked as planned: %d tasks, %d fds, %d timers"):format(st.tasks, st.fds, st.timers))
end

-- A receive that fails inside pcall (a memory error after it announced its
-- wait to the loop), then a plain one-value yield: the loop must take that
-- yield as an ordinary wait on the object, through its setwaker.
function W.receive_in_pcall()
  local _, rx = channel.new()
  local woken
  local obj = { setwaker = function(self, kind, fn) self.fn = fn end }
  spawn(function()
    rx:settimeout(0.001)
    local ok, err = compat.pcall(rx.receive, rx) -- (pcall; on PUC 5.1 one a task can wait in)
    assert(ok or tostring(err):find("memory", 1, true), err)
    local r = coroutine.yield({ obj })
    woken = r and r[1] == obj
  end, "receiver")
  spawn(function()
    for _ = 1, 1000 do if obj.fn then break end socket.sleep(0.001) end
    obj.fn()
  end, "waker")
  cosock.run()
  assert(woken, "the task was not woken through its object")
  return true
end

-- The error handler: tasks raise, the handler sees each error (with its
-- handle) and run goes on; a joiner gets the error too. Allocation on when
-- it returns: the handler is cleared again.
function W.error_handler()
  local seen = 0
  cosock.set_error_handler(function(err, handle)
    -- A task that ran out of memory is a task error too: let it end run,
    -- as the sweep expects of a try that failed.
    if type(err) == "string" and err:find("memory", 1, true) then error(err, 0) end
    assert(err ~= nil and handle.name ~= nil, "the handler got no error or no handle")
    seen = seen + 1
  end)
  local failing = spawn(function() socket.sleep(0) error("handled") end, "failing")
  spawn(function() error({ "a table error" }) end, "failing too")
  local joined
  spawn(function() joined = { failing:join(LIMIT) } end, "joiner")
  local ok, err = pcall(cosock.run)
  cosock.set_error_handler(nil)
  assert(ok, err)
  assert(seen == 2, seen)
  assert(joined[1] == false and tostring(joined[2]):find("handled", 1, true), tostring(joined[2]))
  return true
end

if ... == nil then -- run as a program
  W.prepare()
  print("workload:", W.run())
end

---------------------------------------------------------------------------
-- W.delivery(): the second mode of the sweep (test/alloc_sweep_test.c's
-- "delivery"): one or two allocations fail somewhere and the program goes
-- on, catching each error where it comes out (a send, a receive, a perform,
-- a signal, run itself); at the end every message must have been delivered
-- exactly once or its send reported failed (raised: at most once, never for a
-- plain channel send), no message twice, and every waiter woken by the
-- signals that came after. Raises "delivery: ..." (not a memory error) when
-- one of these does not hold. Also run by test/interrupt_sweep.lua.
---------------------------------------------------------------------------

local D = {}
-- A pcall a task may wait in, also on PUC Lua 5.1 (where compat.pcall runs
-- f in a coroutine: f must be a Lua function, hence call).
local function call(f, ...) return f(...) end
local function pcall(f, ...) return compat.pcall(call, f, ...) end

-- fn() in pcall, again until it returns or tries runs out; true when it did.
local function persist(tries, fn, ...)
  for _ = 1, tries do
    if pcall(fn, ...) then return true end
  end
  return false
end

-- (The tasks below allocate nothing outside their pcalls where they can help
-- it: their ops, closures and tables are made first, so that a failed
-- allocation is caught where it comes out, as a program would catch it.)
local SENT, REFUSED, RAISED, OP_RAISED = "sent", "refused", "raised", "op raised"

local function counts(n)
  local t = {}
  for i = 1, n do t[i] = 0 end
  return t
end

local function flags(n)
  local t = {}
  for i = 1, n do t[i] = false end
  return t
end

-- The tasks of the piece, each with a flag set when it ended normally. A
-- failed allocation while the loop parks a task drops the task (run raises
-- the memory error for it): what it would have done then never happens, and
-- the checks cannot hold; such a try counts as one that ran out of memory.
local tasks = {}

local function dspawn(fn, name)
  local rec = { done = false, h = false }
  tasks[#tasks + 1] = rec
  rec.h = spawn(function()
    fn()
    rec.done = true
  end, name)
end

local function dropped()
  for _, rec in ipairs(tasks) do
    if not rec.done and rec.h and not rec.h:is_alive() then return true end
  end
  return false
end

function D.channels(log)
  local K = 4
  for _, cap in ipairs { false, 2, 0 } do
    local tx, rx
    if cap then tx, rx = channel.new(cap) else tx, rx = channel.new() end
    local l = { kind = tostring(cap), sent = flags(2 * K), got = counts(2 * K), n = 2 * K }
    log[#log + 1] = l
    -- (sends: plain, op.send, plain, op.send in a guard; receives: plain,
    -- op.recv, op.recv with a wrap: functions of the program's that cosock
    -- calls, where the interrupt sweep's interrupts land)
    local sends = {}
    for i = 1, 2 * K do
      if i % 4 == 0 then
        local o = op.send(tx, i)
        sends[i] = op.guard(function() return o end)
      else
        sends[i] = op.send(tx, i)
      end
    end
    local recv = op.recv(rx)
    local wrapped = recv:wrap(function(v, e) return v, e end)
    local send, perform, receive = tx.send, recv.perform, rx.receive
    dspawn(function()
      for i = 1, 2 * K do
        local ok, r
        if i % 2 == 1 then ok, r = pcall(send, tx, i) else ok, r = pcall(perform, sends[i]) end
        l.sent[i] = ok and (r == true and SENT or REFUSED) or (i % 2 == 1 and RAISED or OP_RAISED)
      end
      persist(4, tx.close, tx)
    end, "sender")
    dspawn(function()
      for turn = 1, 20 * K do
        local ok, v, e
        if turn % 3 == 1 then
          ok, v, e = pcall(receive, rx)
        else
          ok, v, e = pcall(perform, turn % 3 == 2 and recv or wrapped)
        end
        if ok then
          if v == nil and e == "closed" then return end
          if l.got[v] then l.got[v] = l.got[v] + 1 end
        end
      end
    end, "receiver")
  end
  -- The receive hub: performs on one receiver, one message each; a message
  -- whose send raised is sent again under a new number.
  local tx, rx = channel.new()
  local hub = { kind = "hub", sent = flags(2 * K), got = counts(2 * K), n = 2 * K }
  log[#log + 1] = hub
  local recv = op.recv(rx)
  local perform, send = recv.perform, tx.send
  for _ = 1, K do
    dspawn(function()
      for _ = 1, 8 do
        local ok, v = pcall(perform, recv)
        if ok then
          if v ~= nil then hub.got[v] = hub.got[v] + 1 end
          return
        end
      end
    end, "hub receiver")
  end
  dspawn(function()
    persist(4, socket.sleep, 0)
    for i = 1, K do
      local ok, r = pcall(send, tx, i)
      hub.sent[i] = ok and r == true and SENT or RAISED
      if hub.sent[i] ~= SENT then
        ok, r = pcall(send, tx, K + i)
        hub.sent[K + i] = ok and r == true and SENT or RAISED
      end
    end
    persist(4, socket.sleep, 0)
    persist(4, tx.close, tx)
  end, "hub sender")
end

-- W waiters on signal.all, on a cond and on a with_nack's nack; the firers
-- fire again until everyone is woken (a later fan-out must wake whoever an
-- earlier one that failed part-way left waiting), at most a few rounds.
function D.waiters(log)
  local signal = require "cosock.signal"
  local N = 4
  local when = require "cosock.when"
  local woken = { all = 0, cond = 0, nack = 0, when = 0, n = N }
  log.woken = woken
  local c, made = op.cond(), op.cond()
  local cwait, mwait = c:wait_op(), made:wait_op()
  local perform = cwait.perform
  local box = { nack = false, go = false }
  local function go() return box.go end
  local chooser = op.choice(op.with_nack(function(n) box.nack = n return op.never() end), op.always(true))
  for _ = 1, N do
    dspawn(function()
      for _ = 1, 8 do
        local ok, got = pcall(signal.wait, "delivery", LIMIT)
        if ok then
          if got then woken.all = woken.all + 1 end -- (a timeout: not woken)
          return
        end
      end
    end, "signal waiter")
    dspawn(function()
      if persist(20, perform, cwait) then woken.cond = woken.cond + 1 end
    end, "cond waiter")
  end
  dspawn(function()
    persist(4, perform, chooser)
    persist(4, made.signal, made)
  end, "chooser")
  for _ = 1, N do
    dspawn(function()
      if not persist(20, perform, mwait) then return end
      for _ = 1, 20 do
        if box.nack and persist(1, perform, box.nack) then
          woken.nack = woken.nack + 1
          return
        end
        persist(1, socket.sleep, 0.01)
      end
    end, "nack waiter")
  end
  for _ = 1, N do
    dspawn(function()
      for _ = 1, 8 do
        local ok, got = pcall(when.wait, go, LIMIT)
        if ok then
          if got then woken.when = woken.when + 1 end
          return
        end
      end
    end, "when waiter")
  end
  dspawn(function()
    for _ = 1, 6 do
      persist(4, socket.sleep, 0)
      box.go = true
      if woken.all < N then pcall(signal.all, "delivery") end
      if woken.cond < N then pcall(c.signal, c) end
    end
  end, "firer")
end

local function check(log)
  for _, l in ipairs(log) do
    for i = 1, l.n do
      local s, g = l.sent[i], l.got[i] or 0
      if s == SENT and g ~= 1 then
        error(("delivery: %s channel, message %d sent, received %d times"):format(l.kind, i, g), 0)
      elseif s == RAISED and g ~= 0 then
        error(("delivery: %s channel, message %d: send raised, received %d times"):format(l.kind, i, g), 0)
      elseif s and s ~= "sent" and g > 1 then
        error(("delivery: %s channel, message %d (%s) received %d times"):format(l.kind, i, s, g), 0)
      end
    end
  end
  local w = log.woken
  for _, k in ipairs { "all", "cond", "nack", "when" } do
    if w[k] ~= w.n then error(("delivery: %d of %d %s waiters woken"):format(w[k], w.n, k), 0) end
  end
end

-- The whole piece: the tasks, then the loop (again after each error), then
-- the checks. before_run(), if given, is called just before the loop runs.
function W.delivery(before_run)
  local log = {}
  tasks = {}
  D.channels(log)
  D.waiters(log)
  if before_run then before_run() end
  local run_loop = function()
    for _ = 1, 50 do
      local ok, err = pcall(cosock.run)
      if ok then return end
      if dropped() then return end
      if type(err) == "string" and err:find("nothing can wake") then error("delivery: " .. err, 0) end
    end
    error("delivery: run() kept raising", 0)
  end
  run_loop()
  if dropped() then error("not enough memory (a task was dropped by a failed park)", 0) end
  check(log)
  return true
end

return W
