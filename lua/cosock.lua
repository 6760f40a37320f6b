-- cosock: the public module of cosock-native, a drop-in replacement for the
-- cosock 0.2.0 coroutine executor. The run loop lives in C (cosock.core);
-- this file puts the API together, raises the loop's errors as cosock does
-- and prints the state dump of a stall.
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

local STALL = "^cosock tried to call socket%.select with no sockets and no timeout"

-- Errors the loop itself raises (from C, so with no position) that cosock
-- 0.2.0 raises from cosock.lua, with that file's position in front: a task's
-- error (its message and traceback), the stall, the checks of what a task
-- yields. Errors of objects' own code (setwaker) go through as they are.
local function raised_by_loop(e)
  return e:find("^stack traceback:\n") or e:find("\nstack traceback:\n", 1, true)
    or e:find(STALL)
    or e:find("^non%-wakeable socket") or e:find("^cosock: ")
    or e:find("^%a+ waker already set, sockets can only block one thread per waker kind")
end

--- run(): the loop (cosock.core.run). What it raises is what cosock 0.2.0
--- raises (see raised_by_loop); after a stall's first line (cosock's words)
--- comes one line per task saying what it waits on (cosock.deadlock).
function m.run()
  local ok, e = pcall(run)
  if ok then return end
  if type(e) == "string" and raised_by_loop(e) then
    if e:find(STALL) then e = e .. require("cosock.deadlock").report() end
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
    if more:find(STALL) then more = more .. require("cosock.deadlock").report() end
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

m.socket = require "cosock.socket"
m.channel = require "cosock.channel"
m.asyncify = require "cosock.asyncify"
m.timer = require "cosock.timer"
m.signal = require "cosock.signal"
m.when = require "cosock.when"

-- cosock.ssl needs LuaSec: load it on first use, so that programs without
-- TLS run where LuaSec is not installed. cosock.ossignal, cosock.stop,
-- cosock.scope, cosock.sync and cosock.op (its nine files): on first use too
-- (a program that does not use them does not pay for them).
local LAZY = { ssl = "cosock.ssl", ossignal = "cosock.ossignal", stop = "cosock.stop",
  scope = "cosock.scope", sync = "cosock.sync", op = "cosock.op" }
setmetatable(m, {
  __index = function(t, k)
    if LAZY[k] then
      local mod = require(LAZY[k])
      rawset(t, k, mod)
      return mod
    end
  end,
})

-- The state dump of a stalled loop (every live task waits on something
-- nothing can wake), printed just before run raises its error: cosock 0.2.0's
-- shape and words, to standard output with the print there was when this
-- module loaded (as cosock's): the tasks the last pass resumed, then the others.
local alwaysprint = print
local BANNER = "vvvvvvvvvvvvvvvvvvvvvvvv DUMP STATE vvvvvvvvvvvvvvvvvvvvvvvv"
local BANNER_END = "^^^^^^^^^^^^^^^^^^^^^^^^ DUMP STATE ^^^^^^^^^^^^^^^^^^^^^^^^"
local RULE = string.rep("=", 57)
local SEPARATOR = string.rep("-", 57)

local function dump_section(title, states)
  alwaysprint(title .. " (" .. #states .. ")")
  alwaysprint(RULE)
  for _, st in ipairs(states) do
    local info = st.info
    alwaysprint(st.co, info.name)
    alwaysprint(info.traceback)
    alwaysprint("recvt:", info.recvt)
    alwaysprint("sendt:", info.sendt)
    alwaysprint("timeout:", info.timeout)
    alwaysprint("last wake:", info.last_wake)
    alwaysprint(SEPARATOR)
  end
end

local function dump_state()
  local woken, others = {}, {}
  for _, st in ipairs(core.thread_states()) do
    local list = st.woken and woken or others
    list[#list + 1] = st
  end
  alwaysprint(BANNER)
  dump_section("threads woken in last turn", woken)
  dump_section("threads not woken in last turn", others)
  alwaysprint(BANNER_END)
end
core.set_stall_hook(dump_state)
-- Where cosock's own Lua code is (this file and lua/cosock/...): the
-- watchdog's "error" action waits until a task has left it (src/watchdog.c).
core.watchdog_library((debug.getinfo(1, "S").source:gsub("%.lua$", "")))

return m
