--- cosock.op.basic: the operations that wait on nothing but the clock:
--- always(...), never(), sleep(s), deadline(t).

local core = require "cosock.core"
local compat = require "cosock.compat"
local node = require "cosock.op.node"

local type, tostring = type, tostring
local monotime, pack = core.monotime, compat.pack
local argerror, base = node.argerror, node.base

local M = {}

local NOTHING = { n = 0 }

-- always(...): ready at once, with these values.
local always_impl = {}
function always_impl.try(inst) return inst.node.a end

function M.always(...)
  return base(always_impl, pack(...))
end

-- never(): never ready.
local never_impl = {}
function never_impl.try() return nil end

function M.never()
  return base(never_impl)
end

-- sleep(s) / deadline(t): ready once the loop's clock (cosock.timer.now())
-- reaches the deadline; sleep's is taken when the perform starts
-- (inst.deadline, set by the perform's instantiate; node.b: a sleep).
local time_impl = {}
M.time_impl = time_impl
function time_impl.try(inst)
  if monotime() >= inst.deadline then return NOTHING end
end
function time_impl.block(inst, st)
  local left = inst.deadline - monotime()
  if left < 0 then left = 0 end
  if left ~= math.huge and (st.timeout == nil or left < st.timeout) then st.timeout = left end
end

function M.sleep(s)
  if type(s) ~= "number" then argerror(1, "sleep", "number expected, got " .. type(s)) end
  if not (s >= 0) or s == math.huge then
    argerror(1, "sleep", "finite number >= 0 expected, got " .. tostring(s))
  end
  return base(time_impl, s, true)
end

function M.deadline(t)
  if type(t) ~= "number" then argerror(1, "deadline", "number expected, got " .. type(t)) end
  if t ~= t then argerror(1, "deadline", "number expected, got nan") end
  local n = base(time_impl, t, false)
  n.deadline = t
  return n
end

return M
