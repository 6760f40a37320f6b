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

local core = require "cosock.core"
local op = require "cosock.op"

local current_task, monotime, alive = core.current_task, core.monotime, core.task_alive
local wait_end = core.wait_end
local yield = coroutine.yield
local type, error, pairs, setmetatable, getmetatable, tostring, floor =
  type, error, pairs, setmetatable, getmetatable, tostring, math.floor

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
    self.max - self.avail, self.max, n, n == 1 and "" or "s", self.last - self.first + 1)
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
-- chosen another operation: the permit is then its chosen result.
local function grant(self)
  while self.avail > 0 and self.first <= self.last do
    local w = self[self.first]
    local st = w.st
    local ready = not w.left and alive(w.co) and not (st and (st.committed or st.done))
    if ready then take(self, w.co) end -- (first: a memory error leaves w in line)
    self[self.first] = nil
    self.first = self.first + 1
    if st then w.out = true end -- (a field it has: no allocation)
    if ready and st then
      op._grant(st, w.inst)
    elseif ready then
      w.granted = true
      local f = w.waker
      w.waker = nil
      if f then f() end
    end
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

local function check_timeout(timeout)
  if timeout ~= nil and (type(timeout) ~= "number" or timeout ~= timeout) then
    error("bad argument #1 to 'acquire' (number or nil expected, got " .. type(timeout) .. ")", 3)
  end
end

-- Takes the lock or a permit for co when it is free and no one waits for
-- it (true); raises for a lock co holds already (level: of the caller).
local function try_take(self, co, level)
  if self.kind == "lock" and self.holders[co] then
    error("cosock.sync: the lock is already held by this task", level + 1)
  end
  if self.avail == 0 then sweep(self) end
  if self.avail > 0 and self.first > self.last then
    take(self, co)
    return true
  end
  return false
end

--- acquire([timeout]) -> true | nil, "timeout": waits (in a task) for the
--- lock or a permit, at most timeout seconds (nil: no limit).
function Sem:acquire(timeout)
  check_self(self, "acquire")
  check_timeout(timeout)
  local co = current_task()
  if co == nil then error("cosock.sync: acquire must be called from a cosock task", 2) end
  if try_take(self, co, 2) then return true end
  local deadline = timeout and monotime() + timeout
  local w = { co = co }
  local recvt = { setmetatable({ w = w, sem = self }, Wait) }
  self[self.last + 1] = w -- (then counted: a memory error leaves no hole in line)
  self.last = self.last + 1
  while true do
    local wait = deadline and deadline - monotime()
    if wait and wait <= 0 then
      w.left = true
      return nil, "timeout"
    end
    if self.untold and self.untold > 0 and (wait == nil or wait > RECHECK) then wait = RECHECK end
    local _, _, err = yield(recvt, nil, wait)
    if w.granted then return true end
    w.left = true
    wait_end(err) -- (the end every wait has: timed out in a cancelled scope, it raises)
    w.left = nil
    sweep(self)
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
  if w and not w.out then -- waiting again (woken by another operation): same place
    w.left = false
  else
    w = { co = st.task, st = st, inst = inst, left = false, out = false }
    self[self.last + 1] = w -- (then counted: a memory error leaves no hole in line)
    self.last = self.last + 1
    inst.w = w
  end
  st.recvt[#st.recvt + 1] = setmetatable({ w = w, sem = self }, OpWait)
  if self.untold and self.untold > 0 and (st.timeout == nil or st.timeout > RECHECK) then
    st.timeout = RECHECK -- (a holder that cannot say it ended: look again)
  end
  grant(self) -- (freed since the try: by this perform's own sends)
end

function acquire_impl.unblock(inst)
  local w = inst.w
  if w then w.left = true end
end

function acquire_impl.finish()
  return GRANTED
end

--- acquire_op() -> a cosock.op operation: ready when acquire would not
--- wait; performing it takes the lock or a permit (true). In a choice the
--- permit is taken only when this operation is the one chosen.
function Sem:acquire_op()
  check_self(self, "acquire_op")
  return op._base(acquire_impl, self)
end

--- release(): gives back one permit (the lock) the calling task holds.
function Sem:release()
  check_self(self, "release")
  local co = current_task()
  if co == nil or not self.holders[co] then
    error(("cosock.sync: release of a %s this task does not hold"):format(self.kind), 2)
  end
  give_back(self, co, 1)
  grant(self)
end

--- held() -> how many the calling task holds (0 outside a task).
function Sem:held()
  local co = current_task()
  return co and self.holders[co] or 0
end

--- available() -> free permits now (for a lock: 1 or 0).
function Sem:available()
  return self.avail
end

local function new(kind, n)
  return setmetatable({ kind = kind, max = n, avail = n, first = 1, last = 0, holders = {} }, Sem)
end

--- semaphore(n) -> a semaphore with n permits (an integer >= 1).
function m.semaphore(n)
  if type(n) ~= "number" or n < 1 or n ~= floor(n) then
    error("bad argument #1 to 'semaphore' (integer >= 1 expected, got " .. tostring(n) .. ")", 2)
  end
  return new("semaphore", n)
end

--- lock() -> a lock (a semaphore of one that only its holder releases,
--- and that a task cannot take twice).
function m.lock()
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
