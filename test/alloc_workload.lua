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
--   W.park_some(), W.receive_in_pcall()  the other sweeps' pieces (see
--                test/alloc_sweep_test.c).
--
-- Each section spawns its tasks; one cosock.run() then drives all of them.
-- Every wait has a time limit, so a run that lost a wake to a failed
-- allocation still ends. New features add a section to SECTIONS (join,
-- bounded channels, timers, an error handler: see doc/reliability.md).

local cosock = require "cosock"
local socket = cosock.socket
local channel = cosock.channel
local op = require "cosock.op"

local W = {}
local MAX_TASKS = 64
local handles = { n = 0 }
local LIMIT = 2 -- seconds: no wait of a healthy run comes near it (also under valgrind)

function W.prepare()
  for i = 1, MAX_TASKS do handles[i] = false end
  handles.n = 0
end

local function spawn(fn, name)
  local h = cosock.spawn(fn, name)
  if handles.n < MAX_TASKS then -- (no allocation: the slots exist)
    handles.n = handles.n + 1
    handles[handles.n] = h
  end
  return h
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

-- A task that raises: run() raises its error, the others carry on.
local function erroring(checks)
  spawn(function() error("boom") end, "erroring")
  checks.erroring = "armed"
end

-- cosock.op: a send perform and a recv perform paired over a rendezvous, a
-- choice that times out while a with_nack branch loses (its nack fires), and
-- a cancelled perform whose offer must leave the channel's line.
local function ops(checks)
  local tx, rx = channel.new(0)
  spawn(function()
    assert(op.send(tx, "a"):perform() == true)
  end, "op sender")
  spawn(function()
    assert(op.choice(op.recv(rx), op.sleep(LIMIT)):perform() == "a")
    local nack
    local v = op.choice(op.recv(rx),
      op.with_nack(function(n) nack = n return op.never() end),
      op.sleep(0.001):wrap(function() return "timeout" end)):perform()
    assert(v == "timeout")
    assert(op.choice(nack:wrap(function() return "nacked" end), op.always("not")):perform() == "nacked")
    local h = spawn(function() op.send(tx, "withdrawn"):perform() end, "op offer")
    socket.sleep(0)
    h:cancel()
    assert(op.choice(op.recv(rx), op.always("none")):perform() == "none")
    checks.ops = true
  end, "op receiver")
end

local SECTIONS = { echo, timers, cancels, erroring, ops }

function W.run()
  local checks = {}
  for _, section in ipairs(SECTIONS) do section(checks) end
  local ok, err = pcall(cosock.run)
  assert(not ok and tostring(err):find("boom", 1, true), "run should raise boom, got: " .. tostring(err))
  cosock.run()
  assert(checks.echo and checks.timers and checks.cancels and checks.ops, "a section did not finish")
  local st = require("cosock.core").stats()
  assert(st.tasks == 0 and st.timers == 0 and st.fds == 0, "the loop is not empty")
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
    local ok, err = pcall(rx.receive, rx)
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

if ... == nil then -- run as a program
  W.prepare()
  print("workload:", W.run())
end

return W
