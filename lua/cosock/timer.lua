--- cosock.timer: timers for cosock tasks, in two families (doc/timers.md).
---
--- Timer objects, as the SmartThings hub's cosock has them (C: src/features/timer_object.c):
---   create_oneshot(delay), create_interval(interval) -> timer
---   timer:handled(), timer:cancel(), timer:wait(), timer:settimeout(t),
---   timer:setwaker("recvr", fn): select sees a timer readable once it is due,
---   until handled().
--- Alarms, after schedlua's alarm module and async.fnl's timeout
--- channel, written over the loop's own task timers:
---   now(), sleep_until(t), after(s, fn, ...), every(s, fn, ...), timeout(s)

local type, error, tostring, getmetatable = type, error, tostring, getmetatable
local compat = require "cosock.compat"
local pack, unpack = compat.pack, compat.unpack

local core = require "cosock.core"
core.open "timer" -- (its C functions: added to cosock.core on first use)
local yield = core.yield -- coroutine.yield, clearer outside a task
local channel = require "cosock.channel"

local monotime, spawn, grid_next = core.monotime, core.spawn, core.grid_next
local timer_info, INTERNAL = core.timer_info, core.INTERNAL
local methods = core.timer_methods

local m = {}

m.create_oneshot = core.timer_oneshot
m.create_interval = core.timer_interval

--- now() -> seconds on the loop's monotonic clock (the clock of every timeout,
--- timer and alarm; cosock.core.monotime).
m.now = monotime

-- Argument checks, raising at the caller of the public function.
local function check_secs(fname, s, positive)
  if type(s) ~= "number" then
    error(("bad argument #1 to '%s' (number expected, got %s)"):format(fname, type(s)), 3)
  end
  if not (s >= 0) or s == math.huge or (positive and s == 0) then
    error(("bad argument #1 to '%s' (finite number %s 0 expected, got %s)"):format(
      fname, positive and ">" or ">=", tostring(s)), 3)
  end
end

local function check_fn(fname, fn)
  if type(fn) ~= "function" then
    error(("bad argument #2 to '%s' (function expected, got %s)"):format(fname, type(fn)), 3)
  end
end

---------------------------------------------------------------------------
-- timer objects: what C does not do
---------------------------------------------------------------------------

--- timer:wait() -> true once the timer is due (at once, without yielding,
--- when it is due already); it stays due until handled(). nil, "timeout" when
--- settimeout's limit passed first; nil, "cancelled" for a timer cancelled
--- (or reset) before the call; nil, "handled" for a oneshot already handled.
--- A cancel while waiting wakes nobody: the wait then ends by its timeout.
function methods:wait()
  local mt = getmetatable(self)
  if mt == nil or mt.__index ~= methods then
    error("bad argument #1 to 'wait' (cosock.timer expected, got " .. type(self) .. ")", 2)
  end
  local state, _, timeout = timer_info(self)
  local deadline
  if timeout ~= nil then deadline = monotime() + timeout end
  local recvt = { self }
  while true do
    if state == "due" then return true end
    if state ~= "pending" then return nil, state end -- "cancelled" or "handled"
    if deadline ~= nil then
      timeout = deadline - monotime()
      if timeout <= 0 then return nil, "timeout" end
    end
    local _, _, err = yield(recvt, nil, timeout, INTERNAL)
    state = timer_info(self)
    if err == "timeout" and state ~= "due" then return nil, "timeout" end
  end
end

---------------------------------------------------------------------------
-- alarms
---------------------------------------------------------------------------

--- sleep_until(t): suspends the calling task until now() >= t. Returns at
--- once, without yielding, when t has passed already. Returns nothing.
function m.sleep_until(t)
  if type(t) ~= "number" or t ~= t then
    error(("bad argument #1 to 'sleep_until' (number expected, got %s)"):format(
      t ~= t and "nan" or type(t)), 2)
  end
  local now = monotime()
  while now < t do
    yield(nil, nil, t - now)
    now = monotime()
  end
end

--- after(s, fn, ...) -> handle: spawns a task (named "timer.after") that
--- calls fn(...) once, s seconds from now (schedlua's delay). The handle is
--- the task's: handle:cancel() before then means fn never runs.
function m.after(s, fn, ...)
  check_secs("after", s)
  check_fn("after", fn)
  local deadline = monotime() + s
  local args = pack(...)
  return spawn(function()
    m.sleep_until(deadline)
    return fn(unpack(args, 1, args.n))
  end, "timer.after")
end

--- every(s, fn, ...) -> handle: spawns a task (named "timer.every") that
--- calls fn(...) every s seconds, on the grid now + k * s (k = 1, 2, ...): a
--- late call does not shift the later ones, and ticks that passed while fn or
--- the loop was busy are skipped, not made up for. fn returning false (not
--- nil) ends it; so does handle:cancel() from another task. Each call comes
--- at least one loop pass after the previous one: with s shorter than a pass
--- (or than the clock's resolution), fn runs once per pass.
function m.every(s, fn, ...)
  check_secs("every", s, true)
  check_fn("every", fn)
  local origin = monotime()
  local args = pack(...)
  return spawn(function()
    local k = 1
    while true do
      local t = origin + k * s
      -- At least one pass of the loop per call, however short s is (below
      -- about 1e-7 the grid no longer moves on the clock's scale): fn never
      -- starves the other tasks.
      if monotime() >= t then yield(nil, nil, 0) else m.sleep_until(t) end
      if fn(unpack(args, 1, args.n)) == false then return end
      k = grid_next(origin, s, k, monotime())
    end
  end, "timer.every")
end

--- timeout(s) -> receiver: a cosock channel receiver that is closed s seconds
--- from now (async.fnl's timeout channel): receive() then returns nil,
--- "closed", and select sees it readable. No task waits for it: a oneshot timer
--- object closes it, so a pending timeout does not keep run() going.
function m.timeout(s)
  check_secs("timeout", s)
  local tx, rx = channel.new()
  -- Closed means "time is up": ready to every select from then on, whatever
  -- cosock.set_close_wakes says (cosock's close would wake one waiter only).
  core.channel_close_ready(tx.link)
  local t = core.timer_oneshot(s)
  t:setwaker("recvr", function() tx:close() end)
  return rx
end

return m
