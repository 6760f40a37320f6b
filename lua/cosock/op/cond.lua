--- cosock.op.cond: one-shot conditions (cond(), c:signal(), c:wait_op());
--- with_nack's nacks are made of these too.

local node = require "cosock.op.node"
local wake = require "cosock.op.wake"

local type, getmetatable, setmetatable = type, getmetatable, setmetatable
local argerror, base = node.argerror, node.base
local wake_set, enlist, EMPTY = wake.wake_set, wake.enlist, wake.EMPTY

local M = {}

local COND = {}
COND.__index = COND
COND.__name = "cosock.op.cond"

local cond_impl = {}

--- cond() -> c: a one-shot condition. c:signal() makes c:wait_op() ready, for
--- every perform, now and later. signal may be called anywhere (also outside a
--- task); signalling twice does nothing more.
function M.cond()
  -- waiters: the performs waiting, in the order they came (list), and which
  -- of them still wait (set; one that moved on is dropped lazily).
  return setmetatable({ signaled = false, waiters = {}, list = {}, live = 0 }, COND)
end

function COND:signal()
  if getmetatable(self) ~= COND then argerror(1, "signal", "cosock.op cond expected, got " .. type(self)) end
  -- (signaled first: a perform that tries from now on finds it ready; a
  -- signal again after an error part-way wakes the rest)
  self.signaled = true
  if self.live == 0 then return end
  wake_set(self, self.waiters, self.list)
  self.list = EMPTY
end

function COND:wait_op()
  if getmetatable(self) ~= COND then argerror(1, "wait_op", "cosock.op cond expected, got " .. type(self)) end
  return base(cond_impl, self)
end

function cond_impl.try(inst)
  if inst.node.a.signaled then return { n = 0 } end
end

function cond_impl.block(inst, st)
  local c = inst.node.a
  if c.signaled then -- (signalled since the try: by this perform's own offers)
    st.woken = true
    return
  end
  if c.waiters[st] then return end
  enlist(c, c.waiters, st)
end

function cond_impl.unblock(inst, st)
  local c = inst.node.a
  if c.waiters[st] then
    c.waiters[st] = nil
    c.live = c.live - 1
  end
end

return M
