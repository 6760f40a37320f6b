-- test/interrupt_sweep.lua: the interrupt sweep. The watchdog's "error"
-- action raises an error in a task at whatever instruction it has reached,
-- except inside cosock's own Lua code, where it waits for the first
-- instruction outside it (src/features/watchdog.c). This sweep requests such an
-- interrupt at every N-th instruction of that code (lua/cosock.lua and
-- lua/cosock/: op, signal, when, channel, ...), for N = 1, 2, 3, ... (one
-- interrupt per try), and raises it as the watchdog would: at the first
-- instruction of a function of the program's that cosock called (a with_nack
-- function, a guard, a wrap, a predicate), the error then coming back through
-- cosock's code; one that would land in the program's own code after
-- cosock returned is the program's affair and is not raised. With --raw it
-- is raised at the N-th instruction itself, inside cosock's code: stricter
-- than any error a program can meet (a failed allocation only happens where
-- something is allocated), it finds the places where only the watchdog's
-- waiting keeps a message from being lost (doc/reliability-wakes.md).
-- It runs test/alloc_workload.lua's W.delivery:
-- channels of each kind with plain and cosock.op sends and receives, the op
-- receive hub, signal.all, a cond and a with_nack's nack with several
-- waiters each, the program catching every error where it comes out. After
-- each try every message must have been delivered exactly once or its send
-- reported failed, and every waiter woken (see W.delivery).
--
--   lua5.3 test/interrupt_sweep.lua [--from N] [--to N] [--stride K] [--raw] [--verbose]
--   (LUA_PATH and LUA_CPATH as for the specs: lua/ and the build's
--   src/cpath/; scripts/interrupt-sweep.sh sets them)
-- Exit status 0 when every try held; the last line says how many tries ran.

local from, to, stride, verbose, raw = 1, math.huge, 1, false, false
local i = 1
while arg and arg[i] do
  local a = arg[i]
  if a == "--from" then from = tonumber(arg[i + 1]) i = i + 1
  elseif a == "--to" then to = tonumber(arg[i + 1]) i = i + 1
  elseif a == "--stride" then stride = tonumber(arg[i + 1]) i = i + 1
  elseif a == "--verbose" then verbose = true
  elseif a == "--raw" then raw = true
  else io.stderr:write("usage: interrupt_sweep.lua [--from N] [--to N] [--stride K] [--verbose]\n") os.exit(2) end
  i = i + 1
end

local here = debug.getinfo(1, "S").source:match("^@(.*)test/interrupt_sweep%.lua$") or "./"
package.path = here .. "test/?.lua;" .. package.path

local cosock = require "cosock"
require "cosock.signal"
require "cosock.op"
require "cosock.when"
local W = require "alloc_workload"

local getinfo, sethook = debug.getinfo, debug.sethook
local jit = rawget(_G, "jit")
if jit then jit.off() jit.flush() end -- (compiled code runs no hooks)

-- Is f a function of the loop's Lua side? (cached per function)
local ours = setmetatable({}, { __mode = "k" })
local function is_ours(f)
  local r = ours[f]
  if r == nil then
    local src = getinfo(f, "S").source
    r = src:find("/cosock/", 1, true) ~= nil or src:find("/cosock.lua", 1, true) ~= nil
    r = r and src:sub(1, 1) == "@" and not src:find("alloc_workload", 1, true)
    ours[f] = r
  end
  return r
end

-- Is a function of cosock's below the running one (level 3 and up)?
local function called_by_ours()
  local level = 3
  while true do
    local info = getinfo(level, "f")
    if info == nil then return false end
    if info.func and is_ours(info.func) then return true end
    level = level + 1
  end
end

local count, target, fired, armed, pending, raised
local function hook()
  if fired or not armed then return end
  local f = getinfo(2, "f")
  local mine = f and f.func and is_ours(f.func)
  if pending then
    if mine then return end
    pending = false
    if not called_by_ours() then -- (it lands in the program's own code)
      fired = true
      return
    end
  elseif mine then
    count = count + 1
    if count ~= target then return end
    if not raw then
      pending = true
      return
    end
  else
    return
  end
  fired, raised = true, true
  if verbose then io.stderr:write(debug.traceback("interrupt here:", 2), "\n") end
  error("interrupt", 0)
end

-- Every task's coroutine gets the hook (the loop may reuse coroutines made
-- before the sweep began); coroutines made inside a task copy it.
local spawn = cosock.spawn
cosock.spawn = function(fn, ...)
  return spawn(function(...)
    sethook(hook, "", 1)
    return fn(...)
  end, ...)
end

-- One try; returns "held", "dropped" (a task dropped by a failed park: the
-- checks cannot hold), or raises with what broke.
local function try(n)
  cosock.reset()
  W.prepare()
  count, target, fired, armed, pending, raised = 0, n, false, false, false, false
  sethook(hook, "", 1) -- (tasks' coroutines made from now on copy it)
  local ok, err = pcall(W.delivery, function() armed = true end)
  armed = false
  sethook()
  W.cancel_all()
  cosock.reset()
  if ok then return "held", fired end
  if type(err) == "string" and err:find("a task was dropped", 1, true) then return "dropped", fired end
  error(("interrupt at library instruction %d: %s"):format(n, tostring(err)), 0)
end

local tries, dropped, failed, interrupted = 0, 0, 0, 0
local n = from
while n <= to do
  local ok, what, fired_ = pcall(try, n)
  tries = tries + 1
  if raised then interrupted = interrupted + 1 end
  if not ok then
    failed = failed + 1
    io.stderr:write(what, "\n")
  elseif what == "dropped" then
    dropped = dropped + 1
  end
  if verbose then io.stderr:write(("N=%d: %s\n"):format(n, ok and what or "FAILED")) end
  if ok and not fired_ then break end -- the whole piece ran before the N-th instruction
  n = n + stride
end
print(("interrupt sweep%s: %d tries (N = %d..%d, stride %d), %d interrupted, %d with a task dropped, %d failed"):format(
  raw and " (raw)" or "", tries, from, n, stride, interrupted, dropped, failed))
os.exit(failed == 0 and 0 or 1)
