--- cosock.signal: schedlua's signals for cosock tasks (its kernel:
--- waitForSignal, signalOne, signalAll, onSignal);
--- doc/signals-and-predicates.md is the reference.
---
---   wait(name [, timeout]) -> true, ...    | nil, "timeout"
---   one(name, ...) -> woken (0 or 1)        wakes the oldest waiter
---   all(name, ...) -> woken                 wakes every waiter
---   on(name, fn [, taskname]) -> handle     a one-shot waiter, registered now
---
--- A name is any value but nil and NaN. A signal nobody waits for is lost.
---
--- A waiting task parks in C (core.signal_park, src/features/sigwait.c),
--- which lists its wait in its name's queue there; a signal (core.signal_fire)
--- wakes the queue's tasks in C, storing its arguments in each one's node
--- (the table it waits with). Where the task forwards its yields from a
--- coroutine (and on Lua 5.1 and 5.2) the node is waited on through the
--- waker protocol (setwaker) instead and listed here, in its name's list,
--- oldest first. Both number their waits from one counter (core.signal_seq),
--- and a signal wakes the two in that order. A node whose wait ended
--- otherwise (a timeout not yet seen by its task, a cancel, reset) is skipped
--- and not counted; the nodes of cancelled tasks are dropped when a signal
--- passes them, or when their list has doubled since it was last swept. So a
--- signal costs work for its own name's waiters only, and waiting costs
--- nothing per pass.

local type, error, tostring, setmetatable = type, error, tostring, setmetatable
local compat = require "cosock.compat"
local isyieldable = compat.isyieldable
local pack, unpack = compat.pack, compat.unpack

local core = require "cosock.core"
core.open "signal" -- (its C functions: added to cosock.core on first use)
local spawn, monotime, waker_stale = core.spawn, core.monotime, core.waker_stale
local signal_park, signal_fire, signal_seq = core.signal_park, core.signal_fire, core.signal_seq
local signal_queued, signal_wait = core.signal_queued, core.signal_wait
local signal_passer, current_task = core.signal_passer, core.current_task

local m = {}
local M = {} -- (internal functions defined below their first use)

-- node -> the coroutine of the task that waits on it (current_task()), to
-- tell its cancel from its resume. Weak both ways: a node's coroutine is
-- also the key it is found under (nodes_of), which Lua 5.1's weak tables
-- would otherwise keep alive.
local task_of = setmetatable({}, { __mode = "kv" })

-- name -> { head = node, tail = node, n = nodes, sweep_at = n }; a name
-- without waiters has no list.
local lists = {}

-- Argument checks, raising at the caller of the public function.
local function check_name(fname, name)
  if name == nil or name ~= name then
    error(("bad argument #1 to '%s' (signal name expected, got %s)"):format(
      fname, name == nil and "nil" or "NaN"), 3)
  end
end

local function check_timeout(fname, t)
  if t ~= nil and (type(t) ~= "number" or not (t >= 0)) then
    error(("bad argument #2 to '%s' (number >= 0 or nil expected, got %s)"):format(
      fname, type(t) ~= "number" and type(t) or (t ~= t and "NaN" or tostring(t))), 3)
  end
end

---------------------------------------------------------------------------
-- waiter nodes
---------------------------------------------------------------------------

local node_methods = {}
local node_mt = { __index = node_methods, __name = "cosock.signal waiter" }

-- Every field exists from the start (false or 0 for none), so that setting
-- one later never allocates: a signal cannot fail half way for memory.
local function new_node(name)
  return setmetatable({
    name = name,
    list = false,       -- the list it is linked in
    prev = false, next = false,
    seq = 0,            -- its place in the order of waits (signal_seq)
    waker = false,      -- the loop's waker, when waited on through setwaker
    args = false,       -- the signal's arguments once signalled (packed)
    by_one = false,     -- they came from one(): passed on should the task never run
    handle = false,     -- on(): the task's handle
    started = false,    -- on(): the task has run
  }, node_mt)
end

-- True while a signal would reach the node's task.
local function waiting(node)
  local w = node.waker
  if w then return not waker_stale(w) end
  local h = node.handle -- on(): its task has not waited yet
  return h and not node.started and h:is_alive() or false
end

-- (Written so that an error at any instruction, the watchdog's interrupt,
-- leaves a list that works: the ends are found by the list's head and tail,
-- not by prev and next, which may then point at a node out of the list; a
-- node that is neither an end nor has a prev is out of the list already.)
local function unlink(node)
  local l = node.list
  if not l then return end
  local p, n = node.prev, node.next
  if l.head == node then
    l.head = n
    p = false -- (a head's prev may be a node already out)
  elseif p then
    p.next = n
  else -- (left half-way out of the list by an error)
    node.next = false
    node.list = false
    return
  end
  if l.tail == node then l.tail = p elseif n then n.prev = p end
  node.prev = false
  node.next = false
  node.list = false
  l.n = l.n - 1
  if not l.head and lists[node.name] == l then lists[node.name] = nil end
end

-- Drops the nodes that no signal would reach (their tasks were cancelled, or
-- reset forgot them); the list is swept again once it has doubled.
local function sweep(l)
  local node = l.head
  while node do
    local nxt = node.next
    if not waiting(node) then unlink(node) end
    node = nxt
  end
  l.sweep_at = l.n * 2 > 64 and l.n * 2 or 64
end

-- The last node of l. l.tail unless an error left it stale (a node that
-- has left the list, unlink stopped part-way): then found from the head.
local function tail_of(l)
  local h, t = l.head, l.tail
  if not h then return false end
  if t and not t.next and (t == h or (t.prev and t.prev.next == t)) then return t end
  t = h
  while t.next do t = t.next end
  return t
end

-- Links the node at the end of its name's list. It either raises (memory)
-- before changing anything, or links it.
local function link(node)
  if node.list then unlink(node) end
  local l = lists[node.name]
  if l == nil then
    l = { head = false, tail = false, n = 0, sweep_at = 64 }
    lists[node.name] = l
  elseif l.n >= l.sweep_at then
    sweep(l)
    if lists[node.name] ~= l then return link(node) end -- (the sweep emptied it)
  end
  local t = tail_of(l)
  node.next = false
  node.prev = t
  node.list = l
  if t then t.next = node else l.head = node end
  l.tail = node
  l.n = l.n + 1
  node.seq = signal_seq()
end

--- node:setwaker("recvr", fn): the waker protocol, for a node waited on from
--- a coroutine whose yields its task forwards. A node signalled before the
--- waker came calls it at once; a waker taken back (nil) before any signal
--- means the wait ended without one: the node leaves its list.
function node_methods:setwaker(kind, fn)
  if kind ~= "recvr" then
    error(core.messages.wake_kind .. tostring(kind), 2)
  end
  if fn == nil then
    self.waker = false
    if not self.args then
      unlink(self)
    elseif self.by_one and task_of[self] and current_task() ~= task_of[self] then -- a cancel, not its resume
      M.pass_on(self)
    end
    return
  end
  if not self.list and not self.args then link(self) end
  self.waker = fn
  if self.args then fn() end
end

-- Gives the node the signal's arguments and wakes its task; false (and
-- nothing done) when no signal would reach it any more.
local function deliver(node, args)
  local w = node.waker
  if w then
    if waker_stale(w) then return false end
    node.args = args
    local tw = core.trace_wake -- (a trace's wake cause; nil while none is on)
    if tw then tw("signal") end
    w()
    if tw then tw(nil) end
    return true
  end
  local h = node.handle -- on(): its task reads the arguments when it starts
  if h and not node.started and not node.args and h:is_alive() then
    node.args = args
    return true
  end
  return false
end

-- Waits in the calling task until the linked node is signalled: the packed
-- arguments, or nil on timeout (timeout as wait takes it).
local function wait_node(node, timeout)
  local deadline = timeout and monotime() + timeout
  while true do
    -- (an on() waiter's node is listed from the start: its wait keeps
    -- that place)
    local _, _, err = signal_park(node, node.name, timeout, node.list and node.seq or nil)
    local args = node.args
    if args then return args end
    if err == "timeout" then
      unlink(node)
      return nil
    end
    -- Resumed for something else (a coroutine of the task's forwarding its
    -- yields): wait on, in its place if it is still listed.
    if deadline then
      timeout = deadline - monotime()
      if timeout <= 0 then
        unlink(node)
        return nil
      end
    end
  end
end

-- The node of the calling coroutine's waits, made on its first one: a
-- coroutine waits on one signal at a time, and once its wait returned no
-- list and no signal holds its node any more. (Saves a table per wait.)
local nodes_of = setmetatable({}, { __mode = "k" })

local function reusable(name)
  local co = coroutine.running()
  local node = nodes_of[co]
  if node == nil then
    node = new_node(name)
    nodes_of[co] = node
  else
    node.name = name
  end
  return node
end

---------------------------------------------------------------------------
-- the API
---------------------------------------------------------------------------

--- wait(name [, timeout]) -> true, ... (the signal's arguments, nils and
--- their count kept), or nil, "timeout" once timeout seconds passed first. In a
--- task only. A timeout of 0 lets the other tasks of this pass signal.
function m.wait(name, timeout)
  -- (the checks call out only to raise: this is the fan-out's hot path)
  if name == nil or name ~= name then check_name("wait", name) end
  if timeout ~= nil then check_timeout("wait", timeout) end
  local args = signal_wait(nil, name, timeout) -- parked directly (src/features/sigwait.c)
  if args then
    local n = args.n -- (no call for the usual zero or one value)
    if n == 1 then return true, args[1] end
    if n == 0 then return true end
    return true, unpack(args, 1, n)
  end
  if args == nil then return nil, "timeout" end
  -- Not parked directly: a wait through the node of the calling coroutine.
  if not isyieldable() then
    error("signal.wait: only a task can wait (called outside a task)", 2)
  end
  local node = reusable(name)
  task_of[node] = current_task()
  local args
  if timeout == nil then -- no timeout: nothing but a signal ends the wait
    signal_park(node, name)
    args = node.args
    if not args then args = wait_node(node) end
  else
    args = wait_node(node, timeout)
  end
  node.args, node.by_one = false, false
  if args == nil then return nil, "timeout" end
  return true, unpack(args, 1, args.n)
end

--- one(name, ...) -> 1 when it woke the oldest waiter of name with the
--- arguments ..., 0 when nobody waits (the signal is lost).
function m.one(name, ...)
  check_name("one", name)
  if lists[name] == nil and not signal_queued(name) then return 0 end
  local args = pack(...)
  -- The oldest of the two lists' first waiters (signal_fire: the parked
  -- ones). A node is woken first, then out of the list: an error in
  -- between leaves a node that no signal reaches any more, which the next
  -- one drops.
  while true do
    local l = lists[name]
    local node = l and l.head
    if signal_fire(name, args, node and node.seq or nil, nil, true) == 1 then return 1 end
    if not node then return 0 end
    local woke = deliver(node, args)
    unlink(node)
    if woke then
      node.by_one = true
      return 1
    end
  end
end

-- A task that one() woke and that is cancelled before it ran: the signal
-- goes to the next waiter (src/features/sigwait.c calls this from the cancel of a
-- task parked directly; node:setwaker(nil) for one waited on through it).
function M.pass_on(node)
  local args = node.args
  if not args or not node.by_one then return end
  node.args, node.by_one = false, false
  m.one(node.name, unpack(args, 1, args.n))
end
signal_passer(M.pass_on, node_mt)

--- all(name, ...) -> how many waiters of name it woke, each with the
--- arguments ... (the same values). Waiters that start waiting while it runs
--- wait for the next signal.
function m.all(name, ...)
  check_name("all", name)
  local l = lists[name]
  if l == nil then -- (only parked waiters: the fan-out's hot path)
    if not signal_queued(name) then return 0 end
    return signal_fire(name, pack(...))
  end
  local args = pack(...)
  -- The two lists in the order their waits began, up to limit: waits that
  -- begin meanwhile wait for the next signal. Each node leaves the list only
  -- once it has been woken, so that an error part-way (memory, the
  -- watchdog's interrupt) leaves the rest listed for the next signal.
  local n, limit = 0, signal_seq()
  while true do
    local node = l.head
    if node and node.seq > limit then node = false end
    n = n + signal_fire(name, args, node and node.seq or nil, limit)
    if not node then break end
    if deliver(node, args) then n = n + 1 end
    unlink(node)
  end
  return n
end

--- on(name, fn [, taskname]) -> handle: a one-shot waiter of name,
--- registered now (a signal raised before the task first runs reaches it),
--- whose task (named taskname, "signal.on" by default) calls fn with the
--- signal's arguments. handle:cancel() before the signal: fn never runs.
function m.on(name, fn, taskname)
  check_name("on", name)
  if type(fn) ~= "function" then
    error(("bad argument #2 to 'on' (function expected, got %s)"):format(type(fn)), 2)
  end
  if taskname == nil then taskname = "signal.on" end
  local node = new_node(name)
  local h = spawn(function()
    node.started = true
    task_of[node] = current_task()
    local args = node.args
    if not args then
      if not node.list then return end -- on() failed after spawning (memory): no waiter
      args = wait_node(node)
    end
    return fn(unpack(args, 1, args.n))
  end, taskname)
  node.handle = h
  link(node) -- (may raise for memory: the task then finds no list and ends)
  return h
end

return m
