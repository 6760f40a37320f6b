-- cosock: the public module of cosock-native, a drop-in replacement for the
-- cosock 0.2.0 coroutine executor. The run loop lives in C (cosock.core);
-- this file puts the API together (its modules load on first use), raises
-- the loop's errors as cosock does and has cosock.dump print a stall's state.
local core = require "cosock.core"

local m = {}

m._VERSION = "0.2.0"                  -- the cosock API this implements
m._NATIVE_VERSION = core._VERSION     -- the cosock-native package version

local spawn, run = core.spawn, core.run

--- spawn(fn, name) -> handle. A non-function fn fails as in cosock 0.2.0: with
--- coroutine.create's own error, raised from here (so with this file's position).
--- Not a tail call: core.spawn notes its caller's caller as where the task was
--- spawned (for its errors).
function m.spawn(fn, name)
  if type(fn) ~= "function" then coroutine.create(fn) end
  local handle = spawn(fn, name)
  return handle
end

-- The loop's fixed words (src/loop/messages.h), as patterns of a message's start.
local MSG = core.messages
local function starts(words) return "^" .. words:gsub("%p", "%%%0") end
local STALL, NON_WAKEABLE = starts(MSG.stall), starts(MSG.non_wakeable)
local WAKER_SET = "^%a+ " .. starts(MSG.socket_waker_set):sub(2) -- (its kind comes first)

-- Errors the loop itself raises (from C, so with no position) that cosock
-- 0.2.0 raises from cosock.lua, with that file's position in front: a task's
-- error (its message and traceback), the stall, the checks of what a task
-- yields. Errors of objects' own code (setwaker) go through as they are.
local function raised_by_loop(e)
  return e:find("^stack traceback:\n") or e:find("\nstack traceback:\n", 1, true)
    or e:find(STALL)
    or e:find(NON_WAKEABLE) or e:find("^cosock: ") or e:find(WAKER_SET)
end

--- run(): the loop (cosock.core.run). What it raises is what cosock 0.2.0
--- raises (see raised_by_loop); after a stall's first line (cosock's words)
--- comes one line per task saying what it waits on (cosock.deadlock).
function m.run()
  local ok, e = pcall(run)
  if ok then return end
  -- (Ctrl-C of a loop blocked for ever on a closed socket: what each task waits on)
  if type(e) == "string" and core.blocked_on_closed() then
    e = e .. require("cosock.deadlock").blocked()
  end
  if type(e) == "string" and raised_by_loop(e) then
    if e:find(STALL) then e = e .. require("cosock.deadlock").stall() end
    error(e, 1)
  end
  error(e, 0)
end

--- step([timeout]) -> tasks remain: one pass of run's loop (doc/embedding.md);
--- what it raises (a task's error, the stall of a step with no limit) comes
--- out as out of run.
local step = core.step
function m.step(timeout)
  local ok, more = pcall(step, timeout)
  if ok then return more end
  if type(more) == "string" and raised_by_loop(more) then
    if more:find(STALL) then more = more .. require("cosock.deadlock").stall() end
    error(more, 1)
  end
  error(more, 0)
end
m.next_timeout, m.pollfd = core.next_timeout, core.pollfd

-- cancel() from the task itself raises from here, with this file's position,
-- as cosock's (a Lua method in cosock.lua) does.
local handle_methods = core.thread_handle
local cancel, handle_is_self = handle_methods.cancel, core.handle_is_self
function handle_methods.cancel(self)
  if handle_is_self(self) then error("Attempt to cancel a spawned task from itself") end
  return cancel(self)
end

m.reset = core.reset
m.get_thread_metadata = core.get_thread_metadata
m.set_error_handler = core.set_error_handler
-- Additions (doc/accounting-and-watchdog.md): the loop's totals, the switch
-- for busy times, and the watchdog for tasks that hog the loop.
m.stats = core.stats
m.set_accounting = core.set_accounting
m.set_watchdog = core.set_watchdog
-- Switches for improvements a cosock 0.2.0 program would notice, off by
-- default (doc/reference.md): close() wakes the tasks waiting on the object;
-- timeouts as LuaSocket means them ("t" mode, a zero timeout without a yield).
m.set_close_wakes = core.set_close_wakes
m.set_luasocket_timeouts = core.set_luasocket_timeouts

-- The modules, each loaded on first use (cosock.lazy): `require "cosock"`
-- costs only the loop and the functions above (doc/footprint.md).
-- pairs(cosock) loads them all first (cosock.ssl only with LuaSec), except
-- the additions cosock.ossignal, cosock.stop, cosock.scope, cosock.sync,
-- cosock.profile, cosock.trace and cosock.tasks, listed once read. A new
-- module is one line here; a new function is a plain field above.
require("cosock.lazy")(m, {
  socket = "cosock.socket",
  channel = "cosock.channel",
  asyncify = "cosock.asyncify",
  ssl = "cosock.ssl",            -- needs LuaSec: raises when it is missing
  timer = "cosock.timer",
  signal = "cosock.signal",
  when = "cosock.when",
  op = "cosock.op",
  ossignal = "cosock.ossignal",
  stop = "cosock.stop",
  scope = "cosock.scope",
  sync = "cosock.sync",
  profile = "cosock.profile",   -- every switch above at once (a function)
  trace = "cosock.trace",       -- the recording of the loop's events
  tasks = "cosock.tasks",       -- the dump of every task, warnings (doc/task-dump.md)
}, {
  ossignal = true,
  stop = true,
  scope = true,
  sync = true,
  profile = true,
  trace = true,
  tasks = true,
})

-- The state dump of a stalled loop (cosock.dump), printed just before run
-- raises its error, with the print there was when this module loaded (as
-- cosock's).
local alwaysprint = print
core.set_stall_hook(function() require("cosock.dump")(alwaysprint) end)
-- Where cosock's own Lua code is (this file and lua/cosock/...): the
-- watchdog's "error" action waits until a task has left it (src/features/watchdog.c).
core.watchdog_library((debug.getinfo(1, "S").source:gsub("%.lua$", "")))

-- COSOCK_TRACE=path: a program runs traced unchanged (cosock.trace loads
-- only then).
local trace_path = os.getenv("COSOCK_TRACE")
if trace_path and trace_path ~= "" then
  require("cosock.trace")._from_env(m, trace_path, os.getenv("COSOCK_TRACE_SIZE"))
end

return m
