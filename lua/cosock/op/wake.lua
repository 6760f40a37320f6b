--- cosock.op.wake: how a perform is woken, and the fan-outs that wake many
--- (a cond's signal, a receiver's hub, a shared object's hub) so that an error
--- part-way leaves every waiter either woken or still listed
--- (doc/reliability-wakes.md).

local error, pcall, pairs, setmetatable = error, pcall, pairs, setmetatable

local M = {}

-- Wakes the perform of st: calls the loop's waker of its waker object, or,
-- before the loop gave that, marks it woken (its setwaker then calls the
-- waker at once). The loop's waker first takes itself back (setwaker(kind,
-- nil)) from the waking task: st.waking tells the waker object that this is
-- no cancel. The loop's waker makes the task ready even when that call
-- raises (src/loop/park.c): a wake that raised still woke.
function M.wake_state(st)
  local w = st.wake
  if not w then
    st.woken = true
    return
  end
  -- (st.wake stays until the waker ran: the waker takes itself back, and
  -- a fan-out that failed calls it again: a loop's waker that ran already
  -- does nothing then)
  st.waking = true
  local ok, err = pcall(w)
  st.waking = false
  if not ok then error(err, 0) end
  st.wake = false
end

-- The fan-outs wake their waiters in the order they came, each leaving the
-- set only once woken: an error part-way (memory, the watchdog's interrupt,
-- a raising waker) leaves the others in it, and calling the fan-out again
-- wakes them. Returns when all are woken.
function M.wake_set(owner, set, list)
  for i = 1, #list do
    local st = list[i]
    if set[st] then
      M.wake_state(st)
      set[st] = nil
      owner.live = owner.live - 1
    end
  end
end

-- Adds st to owner's waiters: set[st], and owner.list in the order they
-- came. A list that is mostly performs that moved on is compacted first.
function M.enlist(owner, set, st)
  local list = owner.list
  if #list >= 2 * owner.live + 8 then
    local j = 0
    for i = 1, #list do
      local w = list[i]
      list[i] = nil
      if set[w] then
        j = j + 1
        list[j] = w
      end
    end
  end
  set[st] = true
  owner.live = owner.live + 1
  list[#list + 1] = st
end

-- The list of a cond once signalled: nothing may join it.
M.EMPTY = setmetatable({}, { __newindex = function() error("cosock.op: internal: EMPTY written", 2) end })

-- Calls fn(x, a) for each x of list but skip, going on past errors; raises
-- the first error once every call was made. A fan-out whose steps may fail
-- (memory, the watchdog's interrupt) so still makes each of its steps.
function M.each_protected(list, skip, fn, a)
  local err
  for _, x in pairs(list) do
    if x ~= skip then
      local ok, e = pcall(fn, x, a)
      if not ok then
        ok = pcall(fn, x, a) -- (once more: each step can be made again)
        if not ok and err == nil then err = e end
      end
    end
  end
  if err ~= nil then error(err, 0) end
end

return M
