--- cosock.sync: locks and semaphores for cosock tasks (copas users have
--- them; queues are cosock.channel, futures are handle:join).
---
--- Fair: waiters get the lock or a permit in the order they asked (FIFO).
--- Holders are tracked by task: what a task holds when it ends (returned,
--- raised, cancelled by its scope or dropped by handle:cancel) goes back. A
--- task of a scope gives it back as it ends; another task's holdings are
--- found when the next acquire looks, and a waiter behind such a holder
--- looks twice a second. A wait obeys its scope's cancellation and deadline
--- (cosock.scope): a cancelled waiter leaves the line and raises.
---
--- The line is a doubly linked list of waiter records (head, tail, n): a
--- waiter that leaves (timed out, cancelled, a choice that chose another
--- operation) is unlinked at once, in O(1), so nothing stays in line until
--- the next release. A waiter whose wait ended otherwise before a grant came
--- to it (a cancel or a timeout made its task ready: its loop waker is
--- stale) is passed over, keeping its place: the permit goes to the next
--- live waiter, and the passed-over one decides when it runs (it raises the
--- cancellation and leaves, or waits on in its place).

local core = require "cosock.core"
local op = require "cosock.op"

local compat = require "cosock.compat"
core.open "signal" -- (for waker_stale, src/features/wakers.c: a waiter passed over)

local current_task, monotime, alive = core.current_task, core.monotime, core.task_alive
local wait_end, waker_stale = core.wait_end, core.waker_stale
local pcall, tointeger = compat.pcall, compat.tointeger
local yield = coroutine.yield
local type, error, pairs, setmetatable, getmetatable, tostring, huge, floor =
  type, error, pairs, setmetatable, getmetatable, tostring, math.huge, math.floor

local m = {}

-- How often a waiter checks holders that are not tasks of a scope (they
-- cannot say they ended).
local RECHECK = 0.5

-- co -> { [semaphore] = true } for every task holding something.
local held = setmetatable({}, { __mode = "k" })

local Sem = {}
Sem.__index = Sem

function Sem.__tostring(self)
  local n = 0
  for _ in pairs(self.holders) do n = n + 1 end
  return ("cosock.sync.%s (%d of %d held by %d task%s, %d waiting)"):format(self.kind,
    self.max - self.avail, self.max, n, n == 1 and "" or "s", self.n - self.gone)
end

-- What a waiter yields (waker protocol); the deadlock report names the
-- holders it waits behind.
local Wait = {
  __name = "cosock.sync wait",
  __index = { setwaker = function(self, _, f) self.w.waker = f end },
  __wait_text = function(self, label_of)
    local names = {}
    for co in pairs(self.sem.holders) do names[#names + 1] = label_of(co) end
    table.sort(names)
    return ("to acquire a %s (cosock.sync), held by task %s"):format(self.sem.kind,
      #names > 0 and table.concat(names, ", task ") or "(none)")
  end,
}
Wait.__tostring = function(self) return tostring(self.sem) end
-- An acquire_op's perform waits on its own waker; this only names the lock
-- in the deadlock report (the loop's waker is not needed: a grant wakes the
-- perform through cosock.op).
local OpWait = {
  __name = Wait.__name, __wait_text = Wait.__wait_text, __tostring = Wait.__tostring,
  __index = { setwaker = function() end },
}

local function check_self(self, what)
  if getmetatable(self) ~= Sem then
    error(("bad self to '%s' (cosock.sync lock or semaphore expected, got %s)"):format(what, type(self)), 3)
  end
end

-- For the methods and constructors that take no argument: one given is a
-- mistake (copas's lock.new(timeout), sema:give(n)), not something to drop.
local function check_none(what, x)
  if x ~= nil then
    error(("bad argument #1 to '%s' (no argument expected, got %s)"):format(what, type(x)), 3)
  end
end

---------------------------------------------------------------------------
-- the line (a doubly linked list; every field exists from the start, so
-- that linking and unlinking allocate nothing and cannot fail half way)
---------------------------------------------------------------------------

-- A waiter of task co; st, inst: an acquire_op's perform and instance.
local function new_waiter(co, st, inst)
  return { co = co, st = st or false, inst = inst or false, prev = false, next = false,
    inline = false, left = false, parked = false, granted = false, waker = false }
end

local function link(self, w)
  local t = self.tail
  w.prev, w.next, w.inline, w.left = t, false, true, false
  if t then t.next = w else self.head = w end
  self.tail = w
  self.n = self.n + 1
end

-- Out of the line (a waiter out already: nothing).
local function unlink(self, w)
  if not w.inline then return end
  local p, nx = w.prev, w.next
  if p then p.next = nx else self.head = nx end
  if nx then nx.prev = p else self.tail = p end
  if w.left then self.gone = self.gone - 1 end
  w.prev, w.next, w.inline, w.left = false, false, false, false
  self.n = self.n - 1
end

-- An acquire_op's waiter whose perform resumed without choosing it: it
-- keeps its place while the perform may wait again (block), holding
-- nothing of the perform (a record of six fields), and counts as gone;
-- once gone ones are half the line they are dropped (amortised O(1) per
-- waiter: a perform that chose another operation, or raised, never comes
-- back for its place, and cosock.op tells nobody).
local function mark_left(self, w)
  if not w.inline or w.left then return end
  w.left = true
  w.co, w.st, w.inst = false, false, false
  self.gone = self.gone + 1
end

local function drop_gone(self)
  local w = self.head
  while w do
    local nx = w.next
    if w.left then unlink(self, w) end
    w = nx
  end
end

-- Whether waiter w is still waiting for a grant: its task lives, its
-- perform (acquire_op) has not chosen, and its wait has not ended
-- otherwise: a cancel or timeout made its task ready (the loop's waker
-- stale) before this grant came. Such a waiter is passed over (its task
-- then takes the permit itself if it still wants it): a cancelled waiter
-- is never handed the lock.
local function waiting(w)
  if w.left or not alive(w.co) then return false end
  local st = w.st
  if st then
    if st.committed or st.done then return false end
    local f = st.wake
    return not (f and waker_stale(f))
  end
  if not w.parked then return true end -- (its own task, running: takes it)
  local f = w.waker
  return f and not waker_stale(f) or false
end

-- Is co a task that tells cosock.sync when it ends (a task of a scope)?
local function tells(co)
  local scope = package.loaded["cosock.scope"]
  return scope ~= nil and scope._spawned(co)
end

-- (What may allocate comes first: a memory error leaves the permit free.)
local function take(self, co)
  local h = held[co] or {}
  h[self] = true
  held[co] = h
  if not tells(co) then self.untold = (self.untold or 0) + 1 end
  self.holders[co] = (self.holders[co] or 0) + 1
  self.avail = self.avail - 1
end

local function give_back(self, co, n)
  local k = self.holders[co] or 0
  if n > k then n = k end
  if n == k then
    self.holders[co] = nil
    if held[co] then held[co][self] = nil end
  else
    self.holders[co] = k - n
  end
  self.avail = self.avail + n
end

-- Serves the line: each waiter still waiting gets a permit, in order. An
-- acquire_op's waiter (w.st: its perform) only when its perform has not
-- chosen another operation: the permit is then its chosen result. Gone
-- waiters met on the way leave the line; one passed over (waiting(w) false
-- for its wait only: its task lives and is in line) keeps its place.
local function grant(self)
  local w = self.head
  while self.avail > 0 and w do
    local nx = w.next
    local st = w.st
    if waiting(w) then
      take(self, w.co) -- (first: a memory error leaves w in line)
      unlink(self, w)
      if st then
        op._grant(st, w.inst)
      else
        w.granted = true
        local f = w.waker
        w.waker = false
        if f then f() end
      end
    elseif w.left or not alive(w.co) or (st and (st.committed or st.done)) then
      unlink(self, w)
    end
    w = nx
  end
end

-- Gives back what holders that ended held (tasks that could not say so).
local function sweep(self)
  if not self.untold or self.untold == 0 then return end
  local untold = 0
  for co, n in pairs(self.holders) do
    if not alive(co) then
      give_back(self, co, n)
    elseif not tells(co) then
      untold = untold + 1
    end
  end
  self.untold = untold
  grant(self)
end

-- acquire's timeout: nil or +inf (no limit), a number of seconds (0 or
-- less: it does not wait); NaN and other values raise. Returns the limit
-- (nil for none).
local function check_timeout(timeout)
  if timeout == nil then return nil end
  if type(timeout) ~= "number" or timeout ~= timeout then
    error("bad argument #1 to 'acquire' (number or nil expected, got " ..
      (type(timeout) == "number" and "NaN" or type(timeout)) .. ")", 3)
  end
  if timeout == huge then return nil end
  return timeout
end

-- Takes the lock or a permit for co when it is free and no one waits for
-- it (true); raises for a lock co holds already (level: of the caller).
local function try_take(self, co, level)
  if self.kind == "lock" and self.holders[co] then
    error("cosock.sync: the lock is already held by this task", level + 1)
  end
  if self.avail == 0 then sweep(self) end
  if self.avail > 0 and self.n == self.gone then
    if self.n > 0 then drop_gone(self) end
    take(self, co)
    return true
  end
  return false
end

-- One wait of waiter w in line (in acquire; under pcall, so that however
-- it ends, the cancellation or another error, w leaves the line: see
-- acquire). Returns whether w was granted the permit.
local function wait_in_line(w, recvt, wait)
  w.parked = true
  local tw = core.trace_wait -- (a trace's label for this wait; nil while none is on)
  if tw then tw("lock") end
  local _, _, err = yield(recvt, nil, wait)
  w.parked = false
  if w.granted then return true end
  wait_end(err) -- (the end every wait has: in a cancelled scope it raises, and acquire takes w out of the line)
  return false
end

--- acquire([timeout]) -> true | nil, "timeout": waits (in a task) for the
--- lock or a permit, at most timeout seconds (nil: no limit).
function Sem:acquire(timeout)
  check_self(self, "acquire")
  timeout = check_timeout(timeout)
  local co = current_task()
  if co == nil then error("cosock.sync: acquire must be called from a cosock task", 2) end
  if try_take(self, co, 2) then return true end
  local deadline = timeout and monotime() + timeout
  local w = new_waiter(co)
  local recvt = { setmetatable({ w = w, sem = self }, Wait) }
  if self.gone > 8 and self.gone * 2 > self.n then drop_gone(self) end
  link(self, w)
  while true do
    local wait = deadline and deadline - monotime()
    if wait and wait <= 0 then
      unlink(self, w)
      return nil, "timeout"
    end
    if self.untold and self.untold > 0 and (wait == nil or wait > RECHECK) then wait = RECHECK end
    local ok, got = pcall(wait_in_line, w, recvt, wait)
    if not ok then -- cancelled (or another error): out of the line, the permit passed on
      w.parked = false
      unlink(self, w)
      if w.granted then
        w.granted = false
        give_back(self, co, 1)
      end
      grant(self)
      error(got, 0)
    end
    if got then return true end
    sweep(self)
    grant(self) -- (a permit passed over while it was ready: its own, if first)
    if w.granted then return true end
  end
end

-- acquire_op's operation: tried as acquire tries; waiting, a place in
-- line that a grant commits (cosock.op's _grant), so a choice takes the
-- permit only when it chose this operation.
local GRANTED = { true, n = 1 }
local acquire_impl = {}

function acquire_impl.try(inst)
  if try_take(inst.node.a, current_task(), 3) then return GRANTED end
end

function acquire_impl.block(inst, st)
  local self = inst.node.a
  local w = inst.w
  if w and w.inline and w.left then -- waiting again (woken by another operation): same place
    w.left = false
    self.gone = self.gone - 1
    w.co, w.st, w.inst = st.task, st, inst
  else
    w = new_waiter(st.task, st, inst)
    if self.gone > 8 and self.gone * 2 > self.n then drop_gone(self) end
    link(self, w) -- (then remembered: a memory error leaves nothing half done)
    inst.w = w
  end
  st.recvt[#st.recvt + 1] = setmetatable({ w = w, sem = self }, OpWait)
  if self.untold and self.untold > 0 and (st.timeout == nil or st.timeout > RECHECK) then
    st.timeout = RECHECK -- (a holder that cannot say it ended: look again)
  end
  grant(self) -- (freed since the try: by this perform's own sends)
end

-- The perform stopped waiting: out of the line when it chose (another
-- operation, or this one: granted, out already) or was abandoned; else it
-- may wait again in its place (mark_left), or raise (dropped later).
function acquire_impl.unblock(inst, st)
  local w = inst.w
  if not w then return end
  local self = inst.node.a
  if st.committed or st.done then unlink(self, w) else mark_left(self, w) end
end

function acquire_impl.finish()
  return GRANTED
end

--- acquire_op() -> a cosock.op operation: ready when acquire would not
--- wait; performing it takes the lock or a permit (true). In a choice the
--- permit is taken only when this operation is the one chosen.
function Sem:acquire_op(x)
  check_self(self, "acquire_op")
  check_none("acquire_op", x)
  return op._base(acquire_impl, self)
end

--- release(): gives back one permit (the lock) the calling task holds.
function Sem:release(x)
  check_self(self, "release")
  check_none("release", x) -- (one permit per call: copas's give(n) is n calls)
  local co = current_task()
  if co == nil or not self.holders[co] then
    error(("cosock.sync: release of a %s this task does not hold"):format(self.kind), 2)
  end
  give_back(self, co, 1)
  grant(self)
end

--- held() -> how many the calling task holds (0 outside a task).
function Sem:held()
  check_self(self, "held")
  local co = current_task()
  return co and self.holders[co] or 0
end

--- available() -> free permits now (for a lock: 1 or 0).
function Sem:available()
  check_self(self, "available")
  return self.avail
end

-- (head, tail: the line; n: waiters linked; gone: those of them left)
local function new(kind, n)
  return setmetatable({ kind = kind, max = n, avail = n, head = false, tail = false, n = 0,
    gone = 0, untold = 0, holders = {} }, Sem)
end

-- The largest count of permits: every integer up to it is a number on
-- every Lua (a float on 5.1 and 5.2), and prints with %d.
local MAX_COUNT = 2 ^ 53

--- semaphore(n) -> a semaphore with n permits (an integer >= 1; not inf,
--- NaN or a fraction: a count of permits).
function m.semaphore(n, x)
  if type(n) ~= "number" or n ~= n or n ~= floor(n) or n < 1 or n > MAX_COUNT then
    local got = type(n) ~= "number" and type(n) or n ~= n and "NaN" or tostring(n)
    error("bad argument #1 to 'semaphore' (integer >= 1 expected, got " .. got .. ")", 2)
  end
  if x ~= nil then
    error("bad argument #2 to 'semaphore' (no argument expected, got " .. type(x) .. ")", 2)
  end
  return new("semaphore", tointeger(n) or n)
end

--- lock() -> a lock (a semaphore of one that only its holder releases,
--- and that a task cannot take twice).
function m.lock(x)
  check_none("lock", x) -- (copas's lock.new(timeout): the timeout is acquire's here)
  return new("lock", 1)
end

--- For cosock.scope: task co ended; what it held goes back.
function m._task_ended(co)
  local h = held[co]
  if h == nil then return end
  held[co] = nil
  for sem in pairs(h) do
    give_back(sem, co, sem.holders[co] or 0)
    grant(sem)
  end
end

return m
