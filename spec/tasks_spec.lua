-- cosock.tasks: the list and dump of every task, the dump on a signal, and
-- the warnings (doc/task-dump.md, doc/reference.md#cosocktasks). Times come
-- from the simulated clock (net.run_virtual) where they are asserted; the
-- warnings about real turns use busy turns far longer than their limit, or
-- limits far longer than any turn.

local cosock = require "cosock"
local core = require "cosock.core"
local tasks = require "cosock.tasks"
local net = require "spec.support.net"
local socket = cosock.socket

local SPEC = "spec/tasks_spec.lua"

local function here() return debug.getinfo(2, "l").currentline end

-- The record of the task named name in list.
local function find(list, name)
  for _, r in ipairs(list) do
    if r.name == name then return r end
  end
  error("no task named " .. name, 2)
end

-- Passes until pred() or 2000 passes (a spec that fails ends).
local function passes_until(pred)
  for _ = 1, 2000 do
    if pred() then return true end
    socket.sleep(0)
  end
  return false
end

local function busy(secs)
  local t0 = socket.gettime()
  while socket.gettime() - t0 < secs do end
end

-- A collector for report: got[kind] lists the messages; all in order.
local function collector()
  local got = { all = {} }
  return got, function(kind, message, info)
    got[kind] = got[kind] or {}
    table.insert(got[kind], { message = message, info = info })
    table.insert(got.all, kind)
  end
end

local function pid()
  return assert(io.open("/proc/self/stat")):read("*l"):match("^(%d+)")
end

describe("cosock.tasks", function()
  before_each(function()
    cosock.reset()
  end)
  after_each(function()
    tasks.warnings(false)
    package.loaded["cosock.trace"] = nil
  end)

  it("is loaded on first use, as cosock.tasks or require 'cosock.tasks'", function()
    assert.equal(tasks, cosock.tasks)
    local out = require("spec.support.child").run([[
      local cosock = require "cosock"
      io.write(tostring(package.loaded["cosock.tasks"]), " ", tostring(require("cosock.core").tasks_list))
    ]])
    assert.equal("nil nil", out)
  end)

  describe("list()", function()
    it("names what every kind of wait waits on, with the state, site, traceback, timeout", function()
      local list, lines = nil, {}
      local tx, rx = cosock.channel.new()
      local btx = cosock.channel.new(0)
      local lock = cosock.sync.lock()
      local orx = cosock.ossignal.receiver("USR2")
      local full, peer = require("spec.support.loop").tcp_pair()
      local chunk = string.rep("x", 65536)
      repeat local _, err = full:send(chunk) until err == "timeout"   -- (its send buffer full)
      local wrap_obj = require("spec.support.loop").wrap(full, "w")
      local srv = socket.tcp()
      assert(srv:bind("127.0.0.1", 0))
      assert(srv:listen())
      local target, site_line
      local function spawn(name, fn)
        lines[name] = debug.getinfo(2, "l").currentline
        site_line = here() + 1                 -- (the site: where cosock.spawn is called)
        local h = cosock.spawn(fn, name)
        return h
      end
      spawn("recv", function() srv:accept() end)
      spawn("send", function() coroutine.yield(nil, { wrap_obj }) end)
      spawn("select", function()
        local u = socket.udp()
        u:setsockname("127.0.0.1", 0)
        socket.select({ rx, u }, nil, 30)
      end)
      local _, rx2 = cosock.channel.new()
      spawn("channel-recv", function() rx2:receive() end)
      spawn("channel-send", function() btx:send(1) end)
      spawn("sleep", function() socket.sleep(30) end)
      spawn("timer", function() cosock.timer.create_oneshot(30):wait() end)
      spawn("holder", function() lock:acquire(); socket.sleep(30) end)
      spawn("lock", function() lock:acquire() end)
      spawn("scope", function()
        cosock.scope.run(function(s) s:spawn(function() socket.sleep(30) end, "in scope") end)
      end)
      spawn("predicate", function() cosock.when.wait(function() return false end) end)
      spawn("signal", function() cosock.signal.wait("never") end)
      spawn("ossignal", function() orx:receive() end)
      target = spawn("target", function() socket.sleep(30) end)
      spawn("join", function() target:join() end)
      spawn("yield", function() coroutine.yield() end)
      spawn("lister", function()
        passes_until(function() return cosock.get_thread_metadata()[1] and #core.thread_states() >= 18 end)
        socket.sleep(0)
        cosock.spawn(function() end, "never ran")
        list = tasks.list()
        cosock.stop()
      end)
      cosock.run()
      orx:close()
      srv:close()
      full:close()
      peer:close()
      local expect = {
        recv = { "recv", "^recv fd %d+$" },
        send = { "send", "^send fd %d+$" },
        select = { "select", "^select of 2: channel receive, recv fd %d+, timeout 30 s$" },
        ["channel-recv"] = { "channel-recv", "^channel receive$" },
        ["channel-send"] = { "channel-send", "^channel send$" },
        sleep = { "sleep", "^sleep 30 s$" },
        timer = { "timer", "^timer object$" },
        lock = { "lock", "^lock" },
        scope = { "scope", "^the end of its scope's tasks$" },
        predicate = { "predicate", "^predicate %(cosock.when%)$" },
        signal = { "signal", '^signal "never"$' },
        ossignal = { "ossignal", "^ossignal fd %d+$" },
        join = { "join", '^join task "target"$' },
        yield = { "yield", "^nothing %(no object, no timeout%)$" },
      }
      for name, e in pairs(expect) do
        local r = find(list, name)
        assert.equal("waiting", r.state, name)
        assert.equal(e[1], r.what, name)
        assert.truthy(r.waits:find(e[2]), name .. ": " .. r.waits)
        assert.equal(SPEC .. ":" .. site_line, (r.site or "nil"):gsub("^.*spec/", "spec/"), name)
        assert.truthy(r.traceback:find("stack traceback", 1, true), name)
        assert.equal("thread", type(r.co), name)
        assert.equal("number", type(r.slot), name)
        assert.equal("number", type(r.since), name)
      end
      assert.equal(30, find(list, "sleep").timeout)
      assert.equal(30, find(list, "select").timeout)
      assert.is_nil(find(list, "recv").timeout)
      local lister = find(list, "lister")
      assert.equal("running", lister.state)
      assert.is_nil(lister.waits)
      assert.truthy(lister.traceback:find(SPEC .. ":" .. (lines.lister + 4), 1, true), lister.traceback)
      local never = find(list, "never ran")
      assert.equal("ready", never.state)
      assert.is_nil(never.since)
      assert.is_nil(never.id)                  -- (no cosock.trace loaded)
    end)

    it("names a name lookup", function()
      if core.dns ~= "c-ares" then return end
      local dns_server = require "spec.support.dns_server"
      local r
      dns_server.session({ ["slow.test"] = { a = { "127.0.0.1" }, hold = true } }, function(srv, dns)
        cosock.spawn(function() dns.toip("slow.test") end, "lookup")
        passes_until(function() return srv.queries > 0 end)
        r = find(tasks.list(), "lookup")
        srv:release("slow.test")
      end, { timeout = 60, tries = 1 })
      assert.equal("lookup", r.what)
      assert.equal("name lookup", r.waits)
    end)

    it("gives since and the time left on the loop's clock (simulated here)", function()
      local list
      net.run_virtual(function()
        cosock.spawn(function() socket.sleep(10) end, "sleeper")
        cosock.spawn(function()
          socket.sleep(2)
          list = tasks.list()
        end, "lister")
      end)
      local s = find(list, "sleeper")
      assert.is_true(math.abs(s.since - 2) < 1e-6, tostring(s.since))
      assert.is_true(math.abs(s.left - 8) < 1e-6, tostring(s.left))
      assert.equal(10, s.timeout)
      assert.is_true(math.abs(find(list, "lister").since) < 1e-6)
    end)

    it("gives whole seconds for a task whose last turn came before the stamps", function()
      core.tasks_stamps(false)                 -- (as before cosock.tasks was loaded)
      cosock.spawn(function() socket.sleep(30) end, "old")
      local ok, err = pcall(function()
        assert.is_true(cosock.step())
        local r = find(tasks.list(), "old")
        assert.is_true(r.since_whole)
        assert.equal(0, r.since % 1)
        assert.is_true(r.since >= 0)
      end)
      core.tasks_stamps(true)
      assert(ok, err)
      local r = find(tasks.list(), "old")      -- (no turn since: still whole seconds)
      assert.is_true(r.since_whole)
    end)

    it("gives the trace's id of each task while cosock.trace is loaded", function()
      package.loaded["cosock.trace"] = { task_id = function() return 42 end }
      cosock.spawn(function() socket.sleep(0) end, "a")
      local r = find(tasks.list(), "a")
      assert.equal(42, r.id)
      package.loaded["cosock.trace"] = { task_id = function() error("boom") end }
      assert.is_nil(find(tasks.list(), "a").id)
    end)
  end)

  describe("dump()", function()
    it("writes a header line per task, then its traceback", function()
      local text, line
      net.run_virtual(function()
        line = here() + 1
        cosock.spawn(function() socket.sleep(10) end, "poller")
        cosock.spawn(function()
          socket.sleep(2)
          tasks.dump(function(s) text = (text or "") .. s end)
        end, "dumper")
      end)
      assert.truthy(text:find("^cosock: 2 tasks\n"), text)
      local header = text:match('\n(task %d+ "poller"[^\n]*)\n')
      assert.is_not_nil(header, text)
      assert.equal('waiting 2.0 s on sleep 10 s (spawned at ' .. SPEC .. ':' .. line .. ')',
        header:match('"poller" (.*)$'):gsub("at .-spec/", "at spec/"))
      assert.truthy(text:find('"poller"[^\n]*\nstack traceback:\n', 1), text)
      assert.truthy(text:find('\ntask %d+ "dumper" running 0.000 s %(spawned at '), text)
    end)

    it("writes to io.stderr by default, to a file, from the main program and a step host", function()
      local got = {}
      local saved = io.stderr
      io.stderr = { write = function(_, s) got[#got + 1] = s end }   -- luacheck: ignore
      local ok, err = pcall(function()
        cosock.spawn(function() socket.sleep(30) end, "s")
        tasks.dump()                           -- from the main program: s has not run yet
        assert.truthy(got[1]:find('task %d+ "s" ready %(spawned at '), got[1])
        assert.is_true(cosock.step())          -- a step host: s now sleeps
        tasks.dump()
        assert.truthy(got[2]:find('task %d+ "s" waiting [%d.]+ s on sleep 30 s'), got[2])
      end)
      io.stderr = saved                        -- luacheck: ignore
      assert(ok, err)
      local name = os.tmpname()
      local f = assert(io.open(name, "w"))
      tasks.dump(f)
      f:close()
      f = assert(io.open(name))
      local text = f:read("*a")
      f:close()
      os.remove(name)
      assert.truthy(text:find('"s" waiting'), text)
    end)

    it("raises a clear error for a bad out", function()
      assert.has_error(function() tasks.dump(42) end,
        "bad argument #1 to 'dump' (function or file expected, got number)")
    end)
  end)

  describe("on_signal()", function()
    it("writes the dump each time the process gets SIGUSR1, while run runs", function()
      local dumps = {}
      local stop
      cosock.spawn(function()
        stop = tasks.on_signal(nil, function(s) dumps[#dumps + 1] = s end)
        socket.sleep(0)
        for i = 1, 2 do
          assert(os.execute("kill -USR1 " .. pid()))
          passes_until(function() return #dumps == i end)
        end
        stop()
      end, "main")
      cosock.run()
      assert.equal(2, #dumps)
      assert.truthy(dumps[1]:find('task %d+ "main" waiting'), dumps[1])
      assert.truthy(dumps[1]:find('task %d+ "cosock.tasks.on_signal USR1" running'), dumps[1])
    end)

    it("works from a step host and with another signal", function()
      local dumps = {}
      local stop = tasks.on_signal("USR2", function(s) dumps[#dumps + 1] = s end)
      cosock.spawn(function() socket.sleep(30) end, "other")
      assert.is_true(cosock.step())
      assert(os.execute("kill -USR2 " .. pid()))
      for _ = 1, 200 do
        cosock.step(0.01)
        if #dumps > 0 then break end
      end
      assert.equal(1, #dumps)
      assert.truthy(dumps[1]:find('"other" waiting'), dumps[1])
      stop()
      stop()                                   -- (twice: nothing more)
      cosock.reset()
    end)

    it("does not keep run going once it is the only task left", function()
      local saved = tasks._poll
      tasks._poll = 0.01
      local ran = false
      tasks.on_signal("USR1", function() end)
      cosock.spawn(function() ran = true end, "work")
      cosock.run()                             -- returns: the dump's task ended by itself
      tasks._poll = saved
      assert.is_true(ran)
      assert.equal(0, core.stats().tasks)
    end)

    it("still ends by itself after a reset dropped an earlier one", function()
      local saved = tasks._poll
      tasks._poll = 0.01
      local stop = tasks.on_signal("USR1", function() end)
      cosock.reset()                           -- (its task is gone, its receiver still open)
      tasks.on_signal("USR2", function() end)
      local still_there = false
      cosock.spawn(function()
        socket.sleep(0.05)                     -- (the dump's task looked several times)
        for _, r in ipairs(tasks.list()) do
          if r.name == "cosock.tasks.on_signal USR2" then still_there = true end
        end
      end, "work")
      cosock.run()
      stop()
      tasks._poll = saved
      assert.is_true(still_there)              -- (not ended while another task still ran)
      assert.equal(0, core.stats().tasks)
    end)

    it("raises a clear error for a bad signal or out", function()
      assert.has_error(function() tasks.on_signal(42) end,
        "bad argument #1 to 'on_signal' (signal name expected, got number)")
      assert.has_error(function() tasks.on_signal("USR1", 42) end,
        "bad argument #2 to 'on_signal' (function or file expected, got number)")
      local ok, err = pcall(function() tasks.on_signal("NOSUCH") end)
      assert.is_false(ok)
      assert.truthy(err:find(": cosock.tasks.on_signal: bad argument #1 to 'receiver' (unknown signal 'NOSUCH'",
        1, true), err)
      assert.equal(0, core.stats().tasks)
    end)
  end)

  describe("warnings", function()
    it("turn: a turn longer than the limit, once it ended; not a short one", function()
      local got, report = collector()
      tasks.warnings { turn = 0.005, report = report }
      cosock.spawn(function() busy(0.03) end, "busy")
      cosock.spawn(function() socket.sleep(0) end, "quick")
      cosock.run()
      assert.equal(1, #got.turn)
      assert.truthy(got.turn[1].message:find("^task 'busy' ran [%d.]+ s in one turn %(limit 0.005 s%)$"),
        got.turn[1].message)
      assert.equal("busy", got.turn[1].info.name)
      assert.is_true(got.turn[1].info.seconds >= 0.03)
      assert.equal(0.005, got.turn[1].info.limit)
      tasks.warnings { turn = 10, report = report }
      cosock.spawn(function() socket.sleep(0) end, "quick")
      cosock.run()
      assert.equal(1, #got.turn)
    end)

    it("ready: a task whose turn came later than the limit after its batch began", function()
      local got, report = collector()
      tasks.warnings { ready = 0.005, report = report }
      cosock.spawn(function() busy(0.03) end, "busy")
      cosock.spawn(function() end, "behind")
      cosock.run()
      assert.equal(1, #got.ready)
      assert.truthy(got.ready[1].message:find("^task 'behind' was ready [%d.]+ s before its turn came %(limit 0.005 s%)$"),
        got.ready[1].message)
      tasks.warnings { ready = 10, report = report }
      cosock.spawn(function() end, "a")
      cosock.spawn(function() end, "b")
      cosock.run()
      assert.equal(1, #got.ready)
    end)

    it("unwakeable: a wait nothing can wake, found while the loop is idle", function()
      local got, report = collector()
      net.run_virtual(function()
        tasks.warnings { unwakeable = true, report = report }
        local tx, rx = cosock.channel.new()
        tx:close()                             -- (closed before the wait: not ready to select)
        local open_tx, open_rx = cosock.channel.new()
        local stuck = cosock.spawn(function() socket.select({ rx }, nil) end, "stuck")
        local nothing = cosock.spawn(function() coroutine.yield() end, "nothing")
        local fine = cosock.spawn(function() socket.select({ open_rx }, nil) end, "fine")
        local _, rx3 = cosock.channel.new()
        cosock.spawn(function() socket.select({ rx3 }, nil, 5) end, "timed")
        cosock.spawn(function()
          socket.sleep(1)
          stuck:cancel()
          nothing:cancel()
          open_tx:send(1)
        end, "closer")
        local _ = fine
      end)
      local names = {}
      for _, w in ipairs(got.unwakeable) do names[w.info.name] = w.message end
      assert.truthy(names.stuck and names.stuck:find("waits on a channel that is closed and empty, which "
        .. "nothing can wake %(spawned at "), names.stuck)
      assert.truthy(names.nothing and names.nothing:find("waits on nothing"), names.nothing)
      assert.is_nil(names.fine)
      assert.is_nil(names.timed)
      assert.is_nil(names.closer)
    end)

    it("unwakeable: a select on a socket closed under it (set_close_wakes off), not with it on", function()
      local got, report = collector()
      for _, wakes in ipairs { false, true } do
        cosock.reset()
        cosock.set_close_wakes(wakes)
        tasks.warnings { unwakeable = true, report = report }
        local srv = assert(socket.bind("127.0.0.1", 0))
        local h = cosock.spawn(function() socket.select({ srv }, nil) end, wakes and "woken" or "on closed")
        cosock.spawn(function()
          srv:close()
          socket.sleep(0.02)                   -- (the loop is idle meanwhile: the check runs)
          if h:is_alive() then h:cancel() end
        end, "closer")
        cosock.run()
      end
      cosock.set_close_wakes(false)
      assert.equal(1, #got.unwakeable)
      assert.truthy(got.unwakeable[1].message:find("^task 'on closed' waits on a socket that is closed %(fd "),
        got.unwakeable[1].message)
    end)

    it("leftover: a task that ended with a receiver open or a timer pending with a waker", function()
      local got, report = collector()
      local orx
      net.run_virtual(function()
        tasks.warnings { leftover = true, report = report }
        cosock.spawn(function()
          orx = cosock.ossignal.receiver("USR2")
          local t = cosock.timer.create_oneshot(0.5)
          t:setwaker("recvr", function() end)
        end, "leaver")
        cosock.spawn(function()
          local rx = cosock.ossignal.receiver("USR2")
          rx:close()
          local t = cosock.timer.create_oneshot(0.5)
          t:cancel()
        end, "tidy")
      end)
      orx:close()
      assert.equal(1, #got.leftover)
      local m = got.leftover[1].message
      assert.truthy(m:find("^task 'leaver' ended with waits still registered: an open cosock.ossignal "
        .. "receiver"), m)
      assert.truthy(m:find("a pending timer object", 1, true), m)
      assert.equal(2, #got.leftover[1].info.left)
    end)

    it("reports once per kind and task to stderr by default, and to the trace when on", function()
      local lines, marks = {}, {}
      package.loaded["cosock.trace"] = {
        on = function() return true end,
        mark = function(kind, message, id) marks[#marks + 1] = { kind, message, id } end,
        task_id = function() return 7 end,
      }
      local saved = io.stderr
      io.stderr = { write = function(_, ...) lines[#lines + 1] = table.concat({ ... }) end } -- luacheck: ignore
      local ok, err = pcall(net.run_virtual, function()
        tasks.warnings { unwakeable = true, interval = 0.1 }
        local h = cosock.spawn(function() coroutine.yield() end, "nothing")
        cosock.spawn(function()
          for _ = 1, 5 do socket.sleep(0.5) end  -- (each wake: the next idle pass checks again)
          h:cancel()
        end, "ticker")
      end)
      io.stderr = saved                        -- luacheck: ignore
      assert(ok, err)
      assert.equal(1, #lines)
      assert.truthy(lines[1]:find("^cosock: warning: task 'nothing' waits on nothing"), lines[1])
      assert.is_true(#marks >= 2)              -- (every warning is marked; stderr has it once)
      assert.equal("warn-unwakeable", marks[1][1])
      assert.equal(7, marks[1][3])
    end)

    it("off by default and after warnings(false)", function()
      local got, report = collector()
      tasks.warnings { turn = 0.001, ready = 0.001, leftover = true, unwakeable = true, report = report }
      tasks.warnings(false)
      cosock.spawn(function() busy(0.01) end, "busy")
      cosock.spawn(function() end, "behind")
      cosock.run()
      assert.same({}, got.all)
    end)

    it("raises a clear error for bad arguments", function()
      local function e(arg)
        local ok, err = pcall(function() tasks.warnings(arg) end)
        assert.is_false(ok)
        assert.equal(SPEC, err:match("^(.-):%d+: "):gsub("^.*spec/", "spec/"))   -- (at the caller)
        return err
      end
      assert.truthy(e("x"):find("bad argument #1 to 'warnings' (table or false expected, got string)", 1, true))
      assert.truthy(e(true):find("(table or false expected, got boolean)", 1, true))
      assert.truthy(e { turn = -1 }:find("(turn: number of seconds > 0 (or false) expected, got -1)", 1, true))
      assert.truthy(e { ready = "1" }:find("(ready: number of seconds > 0 (or false) expected, got string)", 1, true))
      assert.truthy(e { ready = 0 / 0 }:find("got NaN", 1, true))
      assert.truthy(e { turn = math.huge }:find("turn: number of seconds", 1, true))
      assert.truthy(e { leftover = "yes" }:find("(leftover: boolean expected, got string)", 1, true))
      assert.truthy(e { unwakeable = 1 }:find("(unwakeable: boolean expected, got number)", 1, true))
      assert.truthy(e { report = 1 }:find("(report: function expected, got number)", 1, true))
      assert.truthy(e { bogus = 1 }:find("(unknown field bogus: ", 1, true))
    end)
  end)
end)

describe("examples/task_dump.lua", function()
  before_each(function() cosock.reset() end)

  it("prints what its header says", function()
    local out, ok, err = require("spec.support.loop").capture(dofile, "examples/task_dump.lua")
    assert(ok, err)
    local headers = {}
    for line in out:gmatch("[^\n]+") do
      if line:find("^task ") then headers[#headers + 1] = line:gsub("g [%d.]+ s", "g T s", 1) end
    end
    assert.truthy(out:find("^cosock: 5 tasks\n"), out)
    assert.same({
      'task 1 "cosock.tasks.on_signal USR1" waiting T s on ossignal fd ' ..
        headers[1]:match("fd (%d+)") .. ', timeout 1 s (spawned at examples/task_dump.lua:19)',
      'task 2 "acceptor" waiting T s on recv fd ' .. headers[2]:match("fd (%d+)") ..
        ' (spawned at examples/task_dump.lua:25)',
      'task 3 "worker" waiting T s on channel receive (spawned at examples/task_dump.lua:32)',
      'task 4 "poller" waiting T s on sleep 30 s (spawned at examples/task_dump.lua:38)',
      'task 5 "monitor" running T s (spawned at examples/task_dump.lua:41)',
    }, headers)
    assert.truthy(out:find("\nstopped\n$"), out)
  end)
end)
