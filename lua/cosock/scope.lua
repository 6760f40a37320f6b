--- cosock.scope: task scopes (structured concurrency). A scope owns the tasks
--- started in it and ends only when they have all ended; when one fails the
--- others are cancelled; it may have a deadline, which every wait inside obeys.
---
--- Cancellation here cleans up (handle:cancel() outside scopes drops a task
--- on the spot): the cancelled task's pending wait raises `scope.cancelled`,
--- so pcall-based cleanup, to-be-closed variables (Lua 5.4) and `s:defer`
--- functions run as the error unwinds, and each later wait of the task
--- raises it again at once. The C side is src/features/cancel.c; this file keeps the
--- tree of scopes and tells the loop, task by task, what applies to it.
--- doc/structured-concurrency.md is the guide.

local core = require "cosock.core"
local compat = require "cosock.compat"

local CANCELLED = core.cancelled
local mark, monotime, current_task = core.scope_mark, core.monotime, core.current_task
local spawn, hard_cancel = core.spawn, core.thread_handle.cancel
local pcall, pack, unpack = compat.pcall, compat.pack, compat.unpack
local yield = coroutine.yield
local type, error, pairs, setmetatable, getmetatable, tostring, huge =
  type, error, pairs, setmetatable, getmetatable, tostring, math.huge

local m = {}

--- The error value a cancelled wait raises (tostring: "cosock.scope: cancelled").
m.cancelled = CANCELLED

--- How long a scope waits for a cancelled task that catches the cancellation
--- and goes on, before it drops the task as handle:cancel() does.
local GRACE = 1

-- co -> the innermost scope the task runs in (weak: a finished task goes).
local current = setmetatable({}, { __mode = "k" })
-- co -> the cancel flag this file last gave it (to tell a handle:cancel()).
local given = setmetatable({}, { __mode = "k" })
-- co -> true for the tasks s:spawn started (they tell cosock.sync they ended).
local spawned = setmetatable({}, { __mode = "k" })
-- co -> true once the task was cancelled by handle:cancel() (or cosock.stop)
-- while it ran in a scope: it stays cancelled for the rest of its life, in
-- every scope it is in or enters (issue 35: learnt by the innermost scope
-- only, the cancellation was lost by the one enclosing it).
local hard = setmetatable({}, { __mode = "k" })

-- Task co ended (or was dropped): what it held in cosock.sync goes back.
local function ended(co)
  spawned[co] = nil
  local sync = package.loaded["cosock.sync"]
  if sync then sync._task_ended(co) end
end

--- For cosock.sync: whether co is a task started by s:spawn.
function m._spawned(co)
  return spawned[co] == true
end

-- A scope's fields (scoped_run makes it; only this file writes them):
--   parent        the enclosing scope of its task, or nil
--   owner         the task (coroutine) that opened it and runs its fn
--   cos           co -> true: its tasks that have started
--   handles       handle -> co of each of its tasks not yet ended (true until
--                 the task first runs); live counts them
--   subs          the scopes nested in it (a set)
--   defers        its deferred functions, run last first when it ends
--   order         its tasks' handles in spawn order (s:results), made at the first
--   own_deadline  the deadline given to it (monotime), or nil; deadline_at
--                 the earlier of that and its parent's; grace the seconds a
--                 cancelled task gets before it is dropped
--   cancelled     it is cancelled (cancel, a failure, its deadline, its parent)
--   failed, err   a task or fn raised something other than the cancellation:
--                 the first such error
--   expired       its own deadline cut it short (it ends with "timeout")
--   outer         its own task was cancelled from outside, by handle:cancel()
--                 or cosock.stop (hard): the cancellation goes on to its parent
--   cut           a task of it ended by the cancellation, or was dropped;
--                 defer_cut, a deferred function did: either passes an outer
--                 cancellation on instead of ending "cancelled"
--   joining       its own task waits for its tasks (join_all): no cancellation
--                 or deadline applies to that wait; waker the waker of that wait
--   ended         scoped_run is done with it: spawn and defer refuse
--   outcome       what scope.run returned (true, ... | false, err), packed,
--                 for wait_op; done the cond that op waits on, made at the first
local S = {}
S.__index = S
S.__name = "cosock.scope"

-- A method called with a dot (s.defer(fn)) or on another value.
local function check_self(self, what)
  if getmetatable(self) ~= S then
    error(("bad self to '%s' (cosock.scope expected, got %s)"):format(what, type(self)), 3)
  end
end

function S.__tostring(s)
  return ("cosock.scope (%d task%s left%s)"):format(s.live, s.live == 1 and "" or "s",
    s.cancelled and ", cancelled" or "")
end

-- Tells the loop what applies to task co now: its innermost scope's
-- cancellation and deadline, nothing while its scope waits for its tasks
-- (that wait must not be cut short), nothing at all outside scopes. Returns
-- true when the task was cancelled by a handle:cancel() of the task, now
-- (a cancellation this file did not give it) or before (hard).
local function apply(co)
  local s, expected, was, by_handle, _ = current[co], given[co], nil, nil, nil
  if s == nil then
    given[co] = nil
    _, was, by_handle = mark(co, nil)
  elseif s.joining and s.owner == co then
    given[co] = false
    _, was, by_handle = mark(co, false, nil)
  else
    given[co] = s.cancelled
    _, was, by_handle = mark(co, s.cancelled, s.deadline_at)
  end
  if by_handle or (was and not expected) then hard[co] = true end
  return hard[co] == true
end

local function wake(s)
  local w = s.waker
  if w then
    s.waker = nil
    w()
  end
end

-- Marks s and every scope nested in it cancelled; collects them and their
-- tasks.
local function cancel_tree(s, cos, scopes)
  if not s.cancelled then
    s.cancelled = true
    scopes[s] = true
    cos[s.owner] = true
    for co in pairs(s.cos) do cos[co] = true end
    for sub in pairs(s.subs) do cancel_tree(sub, cos, scopes) end
  end
end

local function cancel(s)
  if s.ended or s.cancelled then return end
  local cos, scopes = {}, {}
  cancel_tree(s, cos, scopes)
  for co in pairs(cos) do apply(co) end
  for sc in pairs(scopes) do
    for h, co in pairs(sc.handles) do -- tasks that have not run yet: they will not
      if co == true then mark(h, true, sc.deadline_at) end
    end
    wake(sc)
  end
  wake(s)
end

local function fail(s, err)
  if s.failed == nil then
    s.failed = true
    s.err = err
  end
  cancel(s)
end

--- s:cancel(): cancels every task of the scope and of the scopes nested in
--- it (their waits raise `scope.cancelled`). Nothing once the scope ended.
function S:cancel()
  check_self(self, "cancel")
  cancel(self)
end

--- s:is_cancelled() -> whether the scope was cancelled (by s:cancel(), a
--- failure, its deadline or an enclosing scope).
function S:is_cancelled()
  check_self(self, "is_cancelled")
  return self.cancelled
end

--- s:deadline() -> the time (cosock.timer.now()'s clock) every wait in the
--- scope ends at, its own or an enclosing scope's, whichever is earlier; nil.
function S:deadline()
  check_self(self, "deadline")
  return self.deadline_at
end

--- s:wait_op() -> a cosock.op operation, ready once the scope has ended;
--- its results are what scope.run returned (true, ... | false, err).
function S:wait_op()
  check_self(self, "wait_op")
  local c = self.done
  if c == nil then
    c = require("cosock.op").cond()
    self.done = c
    if self.outcome then c:signal() end
  end
  local s = self
  return c:wait_op():wrap(function() return unpack(s.outcome, 1, s.outcome.n) end)
end

-- The scope ended with these results (scope.run's): kept for wait_op.
local function outcome(s, ...)
  s.outcome = pack(...)
  if s.done then s.done:signal() end
end

--- s:defer(fn): fn() runs when the scope ends (after its tasks ended, its
--- own cancellation lifted), last deferred first, whether it ended well or not.
function S:defer(fn)
  check_self(self, "defer")
  if type(fn) ~= "function" then
    error("bad argument #1 to 'defer' (function expected, got " .. type(fn) .. ")", 2)
  end
  if self.ended then error("cosock.scope: defer on a scope that has ended", 2) end
  self.defers[#self.defers + 1] = fn
end

-- A task of scope s ended: its outcome is r (pcall's).
-- (What cannot allocate first: a memory error after it costs no count.)
local function child_ended(s, h, co, r)
  s.cos[co] = nil
  current[co] = nil
  if s.handles[h] then
    s.handles[h] = nil
    s.live = s.live - 1
  end
  wake(s)
  if not r[1] and r[2] ~= CANCELLED then fail(s, r[2]) end
  if not r[1] and r[2] == CANCELLED then
    s.cut = true -- (a cancellation from outside passes on: scoped_run)
    if s.own_deadline and monotime() >= s.own_deadline then
      s.expired = true -- its deadline cut it short
    end
  end
  ended(co)
end

-- (A frame of this file, or of the calls between the error and here.)
local function ours(line)
  return line:find("cosock[/\\]scope%.lua:") or line:find("^%s*%[C%]: in function '[%w_.]*pcall'")
    or line:find("^%s*%[C%]: in function '[%w_.]*error'") or line:find("^%s*%(%.%.%.tail calls%.%.%.%)")
    or line:find("^%s*%[C%]: in %?$")
end

-- A task's error with its context, as run() shows a task's error: the
-- message, the traceback of the task's own stack where it raised (cut where
-- this file's frames begin), and "(in task 'name', spawned at file:line)".
-- Values other than strings and numbers (scope.cancelled, a table) and a
-- message that already has a traceback (from a nested scope) stay as they are.
local function add_context(err, co, name, site)
  local tb = debug.traceback(co, "", co == coroutine.running() and 1 or 0)
  -- the frames from the one that raised down to the first of this file's
  local frames, started = {}, false
  for line in tb:gmatch("[^\n]+") do
    if line ~= "stack traceback:" then
      if not ours(line) then
        started = true
        frames[#frames + 1] = line
      elseif started and not line:find("^%s*%(%.%.%.tail calls") then
        break
      end
    end
  end
  tb = tostring(err) .. "\nstack traceback:" .. (#frames > 0 and "\n" or "") .. table.concat(frames, "\n")
  local who = name == nil and "an unnamed task" or ("task '" .. tostring(name) .. "'")
  return ("%s\n\t(in %s%s)"):format(tb, who, site and (", spawned at " .. site) or "")
end
-- (The text is made under pcall: where memory runs out, the error goes on as
-- it was raised, never as an error of the error handling.)
local function with_context(err, co, name, site)
  if (type(err) ~= "string" and type(err) ~= "number") or
     tostring(err):find("\nstack traceback:\n", 1, true) then
    return err
  end
  local ok, text = pcall(add_context, err, co, name, site)
  return ok and text or err
end

-- pcall(child_start, ...) for a task of s:spawn, whose error comes back
-- with_context. 5.2+ and LuaJIT: xpcall, the handler runs on the stack that
-- raised. PUC 5.1 (no yield across xpcall): the function runs in a
-- coroutine of its own (as compat.pcall) whose dead stack is read.
local traced_pcall
if compat.puc51 then
  local create, resume, status = coroutine.create, coroutine.resume, coroutine.status
  local function step(sub, name, site, ok, ...)
    if not ok then return false, with_context((...), sub, name, site) end
    if status(sub) == "dead" then return true, ... end
    return step(sub, name, site, resume(sub, yield(...)))
  end
  traced_pcall = function(name, site, f, ...)
    local sub = create(f)
    return step(sub, name, site, resume(sub, ...))
  end
else
  traced_pcall = function(name, site, f, ...)
    local co = coroutine.running()
    return xpcall(f, function(e) return with_context(e, co, name, site) end, ...)
  end
end

-- Where s:spawn was called, "file:line" (for a task's error), or nil.
local function spawn_site()
  local info = debug.getinfo(3, "Sl")
  if info and info.currentline and info.currentline > 0 then
    return info.short_src .. ":" .. info.currentline
  end
  return nil
end

-- Keeps h in s's list of tasks in spawn order (s:results).
local function note_spawned(s, h)
  local order = s.order
  if order == nil then
    order = {}
    s.order = order
  end
  order[#order + 1] = h
end

--- s:results() -> list: waits until every task started with s:spawn so far
--- has ended (joining each in spawn order) and returns their first results,
--- list[i] for the i-th task, list.n of them (nil for one cancelled by its
--- handle). A task's error raises it here too (the scope fails with the
--- first error anyway). Called from fn, or any task but those joined.
function S:results()
  if getmetatable(self) ~= S then error("bad self to 'results' (cosock.scope expected)", 2) end
  local order, list = self.order or {}, {}
  local n = #order
  for i = 1, n do
    local ok, v = order[i]:join()
    if ok == false then error(v, 0) end
    if ok then list[i] = v end
  end
  list.n = n
  return list
end

-- A task of s begins: it is the scope's (allocates: under its pcall).
local function child_start(s, h, co, fn)
  current[co] = s
  spawned[co] = true
  s.cos[co] = true
  if s.handles[h] then s.handles[h] = co end
  -- handle:cancel() before it ran, or its scope's cancel (the loop knew it
  -- as a scope's task from the start, so they only marked it): no run.
  if apply(co) then error(CANCELLED, 0) end
  return fn(s)
end

--- s:spawn(fn, name) -> handle: starts fn(s) as a task of the scope (a normal
--- cosock handle: join, is_alive; cancel cancels it with cleanup). Its error
--- fails the scope (and goes to join, not to the error handler).
function S:spawn(fn, name)
  check_self(self, "spawn")
  if type(fn) ~= "function" then
    error("bad argument #1 to 'spawn' (function expected, got " .. type(fn) .. ")", 2)
  end
  if self.ended then error("cosock.scope: spawn on a scope that has ended", 2) end
  local s, h, site = self, nil, spawn_site()
  h = spawn(function()
    local co = current_task()
    local r = pack(traced_pcall(name, site, child_start, s, h, co, fn))
    local ok, e = pcall(child_ended, s, h, co, r)
    if not ok then -- (a memory error): an ordinary task's error, for run or the handler
      mark(co, nil)
      error(e, 0)
    end
    if not r[1] then error(r[2], 0) end -- for join (the loop keeps it from the handler)
    return unpack(r, 2, r.n)
  end, name)
  s.handles[h] = true
  note_spawned(s, h)
  mark(h, s.cancelled, s.deadline_at) -- a scope's task from the start (handle:cancel)
  s.live = s.live + 1
  -- Told when the task ends however it ends: one the loop dropped (its wait
  -- could not be made) never reached child_ended, and fails the scope.
  h:setwaker("recvr", function()
    local co = s.handles[h]
    if co == nil then return end
    s.handles[h] = nil
    s.live = s.live - 1
    if co ~= true then s.cos[co], current[co] = nil, nil end
    wake(s)
    fail(s, "cosock.scope: task " .. tostring(h) .. " was dropped by the loop")
    if co ~= true then ended(co) end
  end)
  return h
end

-- The object the scope's own task waits on for its tasks (waker protocol);
-- the deadlock report names the tasks it waits for.
local Wait = {
  __name = "cosock.scope wait",
  __index = { setwaker = function(self, _, w) self.scope.waker = w end },
  __wait_text = function(self)
    local names = {}
    for h in pairs(self.scope.handles) do names[#names + 1] = "'" .. tostring(h) .. "'" end
    table.sort(names)
    return ("for the end of %d task%s of its scope (cosock.scope): %s"):format(#names,
      #names == 1 and "" or "s", table.concat(names, ", "))
  end,
}
Wait.__tostring = function(self) return tostring(self.scope) end
local function waitable(s)
  return setmetatable({ scope = s }, Wait)
end

-- Drops the tasks (and those of nested scopes) that did not end within the
-- grace after a cancellation, as handle:cancel() drops a task outside scopes.
local function drop_rest(s)
  for sub in pairs(s.subs) do drop_rest(sub) end
  for h, co in pairs(s.handles) do
    s.handles[h] = nil
    s.live = s.live - 1
    if co ~= true then -- it started: an ordinary task again, then dropped
      s.cos[co], current[co], given[co] = nil, nil, nil
    end
    s.cut = true
    mark(h, nil)
    hard_cancel(h)
    if co ~= true then ended(co) end
  end
end

-- The scope's own task waits, shielded, until every task of s ended:
-- cancelling them at s's own deadline, dropping them after the grace.
local function join_all(s, co)
  s.joining = true
  if apply(co) then s.outer = true end
  local obj, grace_end = { waitable(s) }, nil
  while s.live > 0 do
    if s.outer and not s.cancelled then cancel(s) end
    local now, timeout = monotime(), nil
    if not s.cancelled and s.own_deadline then
      if now >= s.own_deadline then
        s.expired = true
        cancel(s)
      else
        timeout = s.own_deadline - now
      end
    end
    if s.cancelled then
      grace_end = grace_end or now + s.grace
      if now >= grace_end then
        drop_rest(s)
        break
      end
      timeout = grace_end - now
    end
    local tw = core.trace_wait -- (a trace's label for this wait; nil while none is on)
    if tw then tw("scope") end
    yield(obj, nil, timeout)
    if apply(co) then s.outer = true end -- its own task was cancelled (handle:cancel)
  end
  s.joining = false
end

-- Runs the deferred functions, last first; the first error fails the scope.
-- One that raised the cancellation was cut short by what still applies
-- while they run (an enclosing scope's cancellation or deadline, a
-- handle:cancel() of the task): noted, so that the scope passes it on
-- (issue 35: a deadline that passed in an inner scope's cleanup was lost).
local function run_defers(s)
  for i = #s.defers, 1, -1 do
    local ok, err = pcall(s.defers[i])
    if not ok and err == CANCELLED then
      s.defer_cut = true
    elseif not ok and s.failed == nil then
      s.failed = true
      s.err = err
    end
  end
end

local OPTIONS = { timeout = true, deadline = true, grace = true }

-- The text for a bad number in an error message.
local function shown(x)
  if type(x) ~= "number" then return type(x) end
  if x ~= x then return "NaN" end
  return tostring(x)
end

-- A time limit (timeout or deadline): NaN and non-numbers raise; +inf is
-- none (nil); -inf and every time at or before now stay (the scope is
-- expired from the start: scoped_run).
local function check_time(fname, name, v, what)
  if type(v) ~= "number" or v ~= v then
    error(("cosock.scope.%s: option %s must be %s (got %s)"):format(fname, name, what, shown(v)), 5)
  end
  if v == huge then return nil end
  return v
end

-- scope.run's options -> the scope's own deadline (nil: none), grace.
-- Unknown keys raise (a typo must not drop a deadline silently).
local function check_opts(fname, opts)
  for k in pairs(opts) do
    if not OPTIONS[k] then
      error(("cosock.scope.%s: unknown option '%s' (timeout, deadline or grace expected)"):format(
        fname, tostring(k)), 4)
    end
  end
  local timeout, deadline, grace = opts.timeout, opts.deadline, opts.grace
  if timeout ~= nil then timeout = check_time(fname, "timeout", timeout, "a number of seconds") end
  if deadline ~= nil then
    deadline = check_time(fname, "deadline", deadline, "a time of cosock.timer.now()")
  end
  if grace ~= nil and (type(grace) ~= "number" or grace ~= grace or grace < 0) then
    error(("cosock.scope.%s: option grace must be a number of seconds >= 0 (got %s)"):format(fname,
      shown(grace)), 4)
  end
  if timeout ~= nil then
    local at = monotime() + timeout
    if deadline == nil or at < deadline then deadline = at end
  end
  return deadline, grace
end

-- Runs fn(s, ...) (fn(...) without with_scope) in a new scope s in task co.
-- Returns the status ("ok", "failed", "timeout", "cancelled"), then fn's
-- results or the error.
local function scoped_run(co, own_deadline, grace, with_scope, fn, ...)
  local parent = current[co]
  local deadline = parent and parent.deadline_at
  if own_deadline and (deadline == nil or own_deadline < deadline) then deadline = own_deadline end
  local s = setmetatable({
    parent = parent, owner = co, cancelled = parent ~= nil and parent.cancelled or false,
    own_deadline = own_deadline, deadline_at = deadline, grace = grace or GRACE,
    cos = {}, handles = {}, subs = {}, defers = {}, live = 0,
  }, S)
  if parent then parent.subs[s] = true end
  current[co] = s
  if apply(co) then -- its task was cancelled (handle:cancel): so is the scope
    s.outer = true
    cancel(s)
  end
  -- A deadline already passed (0, negative, -inf, or just now): expired
  -- from the start, as a wait with a timeout of 0 or less times out: fn
  -- runs, and its first wait raises. (Said by cancelling, not by the
  -- loop's deadline, which takes 0 and below for "none".)
  if own_deadline and monotime() >= own_deadline then cancel(s) end
  local r
  if with_scope then r = pack(pcall(fn, s, ...)) else r = pack(pcall(fn, ...)) end
  if not r[1] and r[2] ~= CANCELLED then fail(s, r[2]) end
  if own_deadline and monotime() >= own_deadline and (not r[1] or s.live > 0) then
    s.expired = true
  end
  join_all(s, co)
  -- Its own cancellation ends here; what encloses it applies again.
  s.ended = true
  if parent then parent.subs[s] = nil end
  current[co] = parent
  local cancelled_here = not r[1] and r[2] == CANCELLED
  local outer = s.outer or (parent ~= nil and (parent.cancelled or
    (parent.deadline_at ~= nil and monotime() >= parent.deadline_at)))
  if s.outer then -- its task was cancelled (handle:cancel): it stays so
    given[co] = true
    mark(co, true, parent and parent.deadline_at)
  else
    apply(co)
  end
  run_defers(s)
  if s.defer_cut and not outer then -- (cut in its cleanup: what encloses it applies now?)
    outer = s.outer or (parent ~= nil and (parent.cancelled or
      (parent.deadline_at ~= nil and monotime() >= parent.deadline_at)))
  end
  if s.failed then
    outcome(s, false, s.err)
    return "failed", s.err
  end
  -- Cut short by an enclosing scope's cancellation or deadline: the
  -- cancellation goes on to it (the task's next wait would raise anyway).
  if outer and (cancelled_here or s.outer or s.cut or s.defer_cut) then
    outcome(s, false, "cancelled")
    error(CANCELLED, 0)
  end
  if s.expired then
    outcome(s, false, "timeout")
    return "timeout"
  end
  if cancelled_here then
    outcome(s, false, "cancelled")
    return "cancelled"
  end
  outcome(s, true, unpack(r, 2, r.n))
  return "ok", unpack(r, 2, r.n)
end

-- An error out of the scope's own bookkeeping (a memory error): the task is
-- what it was before the scope, and the error goes on.
local function settled(co, parent, ok, ...)
  if ok then return ... end
  local err = ...
  if err ~= CANCELLED then
    current[co] = parent
    apply(co)
  end
  error(err, 0)
end

-- fname, fpos: the public function and fn's argument number (errors).
local function run_scope(fname, fpos, opts, with_scope, fn, ...)
  if type(fn) ~= "function" then
    error(("bad argument #%d to '%s' (function expected, got %s)"):format(fpos, fname, type(fn)), 3)
  end
  local own_deadline, grace = nil, nil
  if opts ~= nil then own_deadline, grace = check_opts(fname, opts) end
  local co = current_task()
  if co == nil then error("cosock.scope: must be called from a cosock task", 3) end
  return settled(co, current[co], pcall(scoped_run, co, own_deadline, grace, with_scope, fn, ...))
end

local function results(status, ...)
  if status == "ok" then return true, ... end
  if status == "failed" then return false, ... end
  return false, status
end

--- scope.run([opts,] fn, ...) -> true, fn's results | false, err. Runs
--- fn(s, ...) in the calling task with a new scope s; returns when fn and
--- every task of s have ended. err: the first error (fn's or a task's; the
--- others' are on their handles), "timeout" when its deadline passed first,
--- "cancelled" when fn raised the cancellation of s:cancel(). opts: timeout
--- (seconds from now), deadline (a time of cosock.timer.now()), grace
--- (seconds a cancelled task may go on before it is dropped; default 1).
function m.run(opts, ...)
  if type(opts) == "table" then return results(run_scope("run", 2, opts, true, ...)) end
  if type(opts) ~= "function" then
    error("bad argument #1 to 'run' (function or table of options expected, got " .. type(opts) .. ")", 2)
  end
  return results(run_scope("run", 1, nil, true, opts, ...))
end

--- scope.timeout(seconds, fn, ...) -> fn's results | nil, "timeout". Runs
--- fn(...) in a scope whose deadline is seconds from now; fn's error is
--- raised again.
function m.timeout(seconds, fn, ...)
  if type(seconds) ~= "number" or seconds ~= seconds then
    error("bad argument #1 to 'timeout' (number expected, got " .. shown(seconds) .. ")", 2)
  end
  local function body(status, ...)
    if status == "ok" then return ... end
    if status == "failed" then error((...), 0) end
    return nil, "timeout"
  end
  return body(run_scope("timeout", 2, { timeout = seconds }, false, fn, ...))
end

--- scope.current() -> the innermost scope the calling task runs in, or nil.
function m.current()
  local co = current_task()
  return co and current[co]
end

return m
