-- Shared helpers for the Lua-layer specs (sockets, channels, ssl, http).
-- Real sockets on 127.0.0.1 with ephemeral ports only; every wait has a limit.

local cosock = require "cosock"
local core = require "cosock.core"
local luassert = require "luassert"
local compat = require "cosock.compat"

local M = {}

M.TIMEOUT = 5 -- the limit on every socket wait in the specs (a bug fails, never hangs)

local completed = false

--- cosock.run(), remembering whether it returned normally (for after_each).
function M.run()
  completed = false
  cosock.run()
  completed = true
end

--- M.run() on the simulation's virtual clock (cosock.sim, sim.on{}): for a
--- spec of what happens at a timeout, not of the OS's clock. Time jumps to the
--- next deadline when no task is ready, so a wait that ends at its timeout
--- takes no real time, and a deadline never passes before a task that is
--- ready runs (a loaded machine cannot reorder them). Tasks are spawned by
--- spawn_tasks(), called with the simulation on.
function M.run_virtual(spawn_tasks)
  local sim = require "cosock.sim"
  sim.on()
  local ok, err = pcall(function()
    spawn_tasks()
    M.run()
  end)
  sim.off()
  if not ok then error(err, 0) end
end

--- In a describe block, after its own before_each (cosock.reset) and
--- after_each (check_clean): every spec of the block runs with the
--- simulation on (sim.on before it, sim.off after), so M.run(), M.in_task()
--- and cosock.run() run on the virtual clock, as M.run_virtual does. For
--- specs that order their tasks with sleeps and whose subject is not the
--- OS's clock: a loaded machine cannot reorder them. Their sockets are the
--- simulation's.
function M.virtual_clock_each()
  local sim, busted = require "cosock.sim", require "busted"
  busted.before_each(function() sim.on() end)
  busted.after_each(function() sim.off() end)
end

--- For after_each: when the last M.run() completed, nothing may be left behind.
function M.check_clean()
  if not completed then return end
  completed = false
  M.assert_clean()
end

function M.assert_clean()
  local s = core.stats()
  luassert.equal(0, s.tasks, "tasks left after run")
  luassert.equal(0, s.timers, "timers left after run")
  luassert.equal(0, s.fds, "fd registrations left after run")
end

function M.stats() return core.stats() end

--- Runs fn in a task (M.run) and returns its results packed.
function M.in_task(fn)
  local r
  cosock.spawn(function() r = M.pack(fn()) end, "spec")
  M.run()
  return r
end

--- M.in_task(fn) on the virtual clock (M.run_virtual).
function M.in_task_virtual(fn)
  local r
  M.run_virtual(function() cosock.spawn(function() r = M.pack(fn()) end, "spec") end)
  return r
end

--- A listening cosock tcp wrapper on 127.0.0.1, ephemeral port, with a timeout.
--- Returns server, port.
function M.listen(backlog)
  local srv = luassert(cosock.socket.bind("127.0.0.1", 0, backlog or 64))
  srv:settimeout(M.TIMEOUT)
  local _, port = srv:getsockname()
  return srv, luassert(tonumber(port))
end

--- Inside a task: a connected pair of cosock tcp wrappers (client, server side),
--- both with the spec timeout. The listening socket is closed.
function M.pair()
  local srv, port = M.listen(1)
  local c = luassert(cosock.socket.tcp())
  c:settimeout(M.TIMEOUT)
  luassert(c:connect("127.0.0.1", port))
  local s = luassert(srv:accept())
  s:settimeout(M.TIMEOUT)
  srv:close()
  return c, s
end

--- A TCP port on 127.0.0.1 where nothing listens. Its socket stays bound (never
--- listening) for the process's life: closed, the port could be taken by another
--- process's listener, or by a connect's own ephemeral port (a self-connect).
local held = {}
function M.dead_port()
  local s = require("socket").tcp()
  luassert(s:bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  held[#held + 1] = s
  return tonumber(port)
end

--- Send `data` one byte at a time, giving the loop a pass after each byte.
function M.trickle(sock, data, pause)
  for i = 1, #data do
    luassert(sock:send(data:sub(i, i)))
    cosock.socket.sleep(pause or 0)
  end
end

--- A string of n bytes where every 8-byte block holds its own offset, so that a
--- duplicated, missing or reordered chunk changes the string.
function M.pattern(n)
  local parts, i = {}, 0
  while i < n do
    parts[#parts + 1] = string.format("%07x|", i % 0x10000000)
    i = i + 8
  end
  return table.concat(parts):sub(1, n)
end

function M.pack(...) return compat.pack(...) end

--- Counts the calls of LuaSocket's own tcp{client} method `name` (as called
--- through its class table) until `finally` restores it; returns a function
--- that reads the count. Shows whether a wrapper went through that method.
function M.count_tcp_calls(name, finally)
  local methods = debug.getregistry()["tcp{client}"].__index
  local original, calls = methods[name], 0
  methods[name] = function(...) calls = calls + 1; return original(...) end
  finally(function() methods[name] = original end)
  return function() return calls end
end

--- The error message fn() raises (fails the test when it raises nothing).
function M.error_of(fn)
  local ok, err = pcall(fn)
  luassert(not ok, "expected an error")
  return tostring(err)
end

-- Runs fn(...) in a coroutine of its own and forwards each of its yields to
-- the loop (and the loop's answer back), as a library with its own
-- coroutines does. Returns what fn returned.
function M.forwarding(fn, ...)
  return M.forwarding_logged(nil, fn, ...)
end

-- The same, appending each tuple fn's coroutine yielded (packed) to log.
function M.forwarding_logged(log, fn, ...)
  local co = coroutine.create(fn)
  local res = M.pack(coroutine.resume(co, ...))
  while coroutine.status(co) ~= "dead" do
    if log then log[#log + 1] = M.pack(compat.unpack(res, 2, res.n)) end
    local answer = M.pack(coroutine.yield(compat.unpack(res, 2, res.n)))
    res = M.pack(coroutine.resume(co, compat.unpack(answer, 1, answer.n)))
  end
  assert(res[1], res[2])
  return compat.unpack(res, 2, res.n)
end

return M
