--- cosock.when: schedlua's predicates for cosock tasks (its
--- waitForPredicate, when, whenever,
--- signalOnPredicate); doc/signals-and-predicates.md is the reference.
---
---   wait(pred [, timeout]) -> pred's values | nil, "timeout"
---   when(pred, fn [, name]) -> handle        fn(pred's values), once
---   whenever(pred, fn [, name]) -> handle    fn(...) each pass pred is true,
---                                            until pred returns nil
---   signal_on(pred, signame, ...) -> handle  signal.all(signame, ...) once
---   set_interval(s) -> previous, get_interval() -> s
---
--- The loop evaluates the predicates (src/features/predicate.c), not a Lua task: once
--- per pass after the ready tasks ran, and every interval (10 ms) while no
--- task runs, so waiting predicates cost an idle program almost nothing.

local type, error, tostring, getmetatable = type, error, tostring, getmetatable
local compat = require "cosock.compat"
local pack, unpack = compat.pack, compat.unpack

local core = require "cosock.core"
core.open "when" -- (its C functions: added to cosock.core on first use)
local signal = require "cosock.signal"

local spawn, pred_wait, pred_interval = core.spawn, core.pred_wait, core.pred_interval

-- pred_wait's flags (src/features/predicate.c)
local LATER = 1     -- park at once: the loop calls the predicate next
local UNTIL_NIL = 2 -- a nil result ends the wait (returns nothing)

local m = {}

-- Argument checks, raising at the caller of the public function.
local function callable(f)
  if type(f) == "function" then return true end
  local mt = getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

local function check_pred(fname, pred)
  if not callable(pred) then
    error(("bad argument #1 to '%s' (function expected, got %s)"):format(fname, type(pred)), 3)
  end
end

local function check_fn(fname, fn)
  if not callable(fn) then
    error(("bad argument #2 to '%s' (function expected, got %s)"):format(fname, type(fn)), 3)
  end
end

local function check_timeout(fname, t)
  if t ~= nil and (type(t) ~= "number" or not (t >= 0)) then
    error(("bad argument #2 to '%s' (number >= 0 or nil expected, got %s)"):format(
      fname, type(t) ~= "number" and type(t) or (t ~= t and "NaN" or tostring(t))), 3)
  end
end

local function task_name(name, default)
  if name == nil then return default end
  return name
end

--- wait(pred [, timeout]) -> the values pred returned once its first value
--- is true (at once, without yielding, when it is true already), or nil,
--- "timeout" when timeout seconds passed first. nil and false both mean "not
--- yet". An error raised by pred, or a yield in it, is raised here. In a
--- task (outside one, only a pred that is true already returns).
function m.wait(pred, timeout)
  check_pred("wait", pred)
  check_timeout("wait", timeout)
  return pred_wait(pred, timeout, 0)
end

--- when(pred, fn [, name]) -> handle: spawns a task (name: "when.when" by
--- default) that waits for pred and calls fn with its values, once. fn's
--- results are the task's (handle:join).
function m.when(pred, fn, name)
  check_pred("when", pred)
  check_fn("when", fn)
  return spawn(function()
    return fn(pred_wait(pred, nil, 0))
  end, task_name(name, "when.when"))
end

--- whenever(pred, fn [, name]) -> handle: spawns a task (name:
--- "when.whenever" by default) that calls fn with pred's values each time
--- pred is seen true, at most once per pass. It ends when pred returns nil
--- (false keeps it waiting), or by handle:cancel().
function m.whenever(pred, fn, name)
  check_pred("whenever", pred)
  check_fn("whenever", fn)
  return spawn(function()
    local flags = UNTIL_NIL
    while true do
      local r = pack(pred_wait(pred, nil, flags))
      if r.n == 0 then return end
      fn(unpack(r, 1, r.n))
      flags = UNTIL_NIL + LATER -- the next check is the loop's, after this pass
    end
  end, task_name(name, "when.whenever"))
end

--- signal_on(pred, signame, ...) -> handle: spawns a task (named
--- "when.signal_on") that waits for pred, then raises signame with the
--- arguments ... to every waiter (cosock.signal.all: schedlua's
--- signalOnPredicate signals all). The task returns how many it woke.
function m.signal_on(pred, signame, ...)
  check_pred("signal_on", pred)
  if signame == nil or signame ~= signame then
    error(("bad argument #2 to 'signal_on' (signal name expected, got %s)"):format(
      signame == nil and "nil" or "NaN"), 2)
  end
  local args = pack(...)
  return spawn(function()
    pred_wait(pred, nil, 0)
    return signal.all(signame, unpack(args, 1, args.n))
  end, "when.signal_on")
end

--- set_interval(s) -> the previous interval: how often (seconds, finite,
--- > 0) the loop evaluates waiting predicates while no task runs. 0.01 by
--- default; reset() restores it.
function m.set_interval(s)
  if type(s) ~= "number" or not (s > 0) or s == math.huge then
    error(("bad argument #1 to 'set_interval' (finite number > 0 expected, got %s)"):format(
      type(s) ~= "number" and type(s) or (s ~= s and "NaN" or tostring(s))), 2)
  end
  return pred_interval(s)
end

--- get_interval() -> the interval in seconds.
function m.get_interval()
  return pred_interval()
end

return m
