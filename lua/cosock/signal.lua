--- cosock.signal: schedlua's signals for cosock tasks (seeds/000, "the
--- kernel": waitForSignal, signalOne, signalAll, onSignal);
--- doc/signals-and-predicates.md is the reference.
---
---   wait(name [, timeout]) -> true, ...    | nil, "timeout"
---   one(name, ...) -> woken (0 or 1)        wakes the oldest waiter
---   all(name, ...) -> woken                 wakes every waiter
---   on(name, fn [, taskname]) -> handle     a one-shot waiter, registered now
---
--- A name is any value but nil and NaN. A signal nobody waits for is lost.
---
--- Each waiter is a node of its name's list, oldest first, and speaks the
--- waker protocol: the waiting task yields it (with INTERNAL: no ready lists
--- are built), the loop hands it a waker (and the node joins its list), and a
--- signal stores its arguments in the node and calls that waker. A wait that ends otherwise (a timeout, a
--- cancel, an error while parking) makes the loop call setwaker(kind, nil),
--- which takes the node out of its list at once. A waker that no longer
--- wakes (its task timed out and was not resumed yet, or reset forgot it) is
--- recognised with core.waker_stale (src/wakers.c): such a node is dropped,
--- not counted. So a signal costs work for the waiters it reaches, and
--- waiting costs nothing per pass.

local type, error, tostring, setmetatable = type, error, tostring, setmetatable
local yield, isyieldable = coroutine.yield, coroutine.isyieldable
local pack, unpack = table.pack, table.unpack

local core = require "cosock.core"
local spawn, monotime, waker_stale, INTERNAL = core.spawn, core.monotime, core.waker_stale, core.INTERNAL

local m = {}

-- name -> { head = node, tail = node }; a name without waiters has no list.
local lists = {}

-- Argument checks, raising at the caller of the public function.
local function check_name(fname, name, argn)
  if name == nil or name ~= name then
    error(("bad argument #%d to '%s' (signal name expected, got %s)"):format(
      argn or 1, fname, name == nil and "nil" or "NaN"), 3)
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

-- Every field exists from the start (false for none), so that setting one
-- later never allocates: a signal then cannot fail half way for memory.
local function new_node(name)
  return setmetatable({
    name = name,
    list = false,    -- the list it is linked in
    prev = false, next = false,
    waker = false,   -- the loop's waker while its task waits
    args = false,    -- the signal's arguments once signalled (packed)
    handle = false,  -- on(): the task's handle (it may not have parked yet)
    started = false, -- on(): the task has run
  }, node_mt)
end

local function link(node)
  local l = lists[node.name]
  if l == nil then
    l = { head = false, tail = false }
    lists[node.name] = l
  end
  node.list, node.prev, node.next = l, l.tail, false
  if l.tail then l.tail.next = node else l.head = node end
  l.tail = node
end

local function unlink(node)
  local l = node.list
  if not l then return end
  local p, n = node.prev, node.next
  if p then p.next = n else l.head = n end
  if n then n.prev = p else l.tail = p end
  node.list, node.prev, node.next = false, false, false
  if not l.head and lists[node.name] == l then lists[node.name] = nil end
end

--- node:setwaker("recvr", fn): the waker protocol. The waker comes when the
--- task parks: a wait()'s node joins its list then (so a wait that could not
--- be made, for lack of memory, leaves no waiter behind); an on() node is in
--- it already, and one signalled before its task parked calls the waker at
--- once. A waker taken back (nil) before any signal means the wait ended
--- without one: the node leaves its list.
function node_methods:setwaker(kind, fn)
  if kind ~= "recvr" then
    error("unsupported wake kind: " .. tostring(kind), 2)
  end
  if fn == nil then
    self.waker = false
    if not self.args then unlink(self) end
    return
  end
  if not self.list and not self.args then link(self) end -- (may raise: then not linked)
  self.waker = fn
  if self.args then fn() end
end

-- True when a signal would reach the node's task.
local function reaches(node)
  local w = node.waker
  if w then return not waker_stale(w) end
  local h = node.handle
  return h and h:is_alive() -- on(): its task has not parked yet
end

-- Stores the arguments and wakes the task (the node is out of its list).
local function deliver(node, args)
  node.args = args
  local w = node.waker
  if w then w() end
end

-- Waits in the calling task until the node is signalled: the packed
-- arguments, or nil on timeout (timeout as wait takes it).
local function wait_node(node, timeout)
  local recvt = { node }
  local deadline = timeout and monotime() + timeout
  while true do
    local _, _, err = yield(recvt, nil, timeout, INTERNAL)
    -- (the loop took the waker back: the node is out of its list unless signalled)
    local args = node.args
    if args then return args end
    if err == "timeout" then return nil end
    -- Resumed for something else (a coroutine of the task's forwarding its
    -- yields): wait again, at the end of the list.
    if deadline then
      timeout = deadline - monotime()
      if timeout <= 0 then return nil end
    end
  end
end

---------------------------------------------------------------------------
-- the API
---------------------------------------------------------------------------

--- wait(name [, timeout]) -> true, ... (the signal's arguments, nils and
--- their count kept), or nil, "timeout" once timeout seconds passed first. In a
--- task only. A timeout of 0 lets the other tasks of this pass signal.
function m.wait(name, timeout)
  check_name("wait", name)
  check_timeout("wait", timeout)
  if not isyieldable() then
    error("signal.wait: only a task can wait (called outside a task)", 2)
  end
  local args = wait_node(new_node(name), timeout) -- (it joins its list as it parks)
  if args == nil then return nil, "timeout" end
  return true, unpack(args, 1, args.n)
end

--- one(name, ...) -> 1 when it woke the oldest waiter of name with the
--- arguments ..., 0 when nobody waits (the signal is lost).
function m.one(name, ...)
  check_name("one", name)
  local l = lists[name]
  if l == nil then return 0 end
  local args = pack(...) -- (first: once a node is out of its list, nothing may fail)
  while l.head do
    local node = l.head
    unlink(node)
    if reaches(node) then
      deliver(node, args)
      return 1
    end
  end
  return 0
end

--- all(name, ...) -> how many waiters of name it woke, each with the
--- arguments ... (the same values). Waiters that start waiting while it runs
--- wait for the next signal.
function m.all(name, ...)
  check_name("all", name)
  local l = lists[name]
  if l == nil then return 0 end
  local args = pack(...)
  lists[name] = nil
  local n, node = 0, l.head
  while node do
    local nxt = node.next
    node.list, node.prev, node.next = false, false, false
    if reaches(node) then
      n = n + 1
      deliver(node, args)
    end
    node = nxt
  end
  return n
end

-- Nodes of on() whose task has not run yet: one cancelled before it ran
-- never tells its node (it never parked), so now and then they are looked
-- at and those of dead tasks leave their lists. Amortised: the sweep runs
-- when the set doubled since the last one.
local fresh, nfresh, sweep_at = {}, 0, 64

local function sweep()
  local j = 0
  for i = 1, nfresh do
    local node = fresh[i]
    fresh[i] = nil
    if not node.started and node.list then
      if node.handle:is_alive() then
        j = j + 1
        fresh[j] = node
      else
        unlink(node)
      end
    end
  end
  nfresh = j
  sweep_at = j * 2 > 64 and j * 2 or 64
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
    local args = node.args
    if not args then
      if not node.list then return end -- on() failed after spawning (memory): no waiter
      args = wait_node(node)
    end
    return fn(unpack(args, 1, args.n))
  end, taskname)
  node.handle = h
  -- Each step may raise for memory; the task then finds no list and ends.
  fresh[nfresh + 1] = node
  nfresh = nfresh + 1
  link(node)
  if nfresh > sweep_at then sweep() end
  return h
end

return m
