--- cosock.op.perform: op:perform(). Try each base operation in argument
--- order without waiting; the first that succeeds is the one chosen.
--- Otherwise wait once in the loop on the union of what they wait on (recvt,
--- sendt, the nearest deadline), then try again in order. One perform never
--- completes two operations (doc/op.md, doc/reliability-wakes.md).

local core = require "cosock.core"
local channel = require "cosock.channel"
local compat = require "cosock.compat"
local node = require "cosock.op.node"
local wake = require "cosock.op.wake"
local cond = require "cosock.op.cond"
local basic = require "cosock.op.basic"
local recv = require "cosock.op.recv"
local send = require "cosock.op.send"

local type, error, pairs, pcall, rawget = type, error, pairs, pcall, rawget
local pack, unpack = compat.pack, compat.unpack
local yield, resume, create, costatus = coroutine.yield, coroutine.resume, coroutine.create,
  coroutine.status
local monotime, current_task, wait_end = core.monotime, core.current_task, core.wait_end

local try_send = core.channel_try_send
local sender_send = channel.sender.send
local OP, is_op, argerror = node.OP, node.is_op, node.argerror
local BASE, CHOICE, WRAP, GUARD = node.BASE, node.CHOICE, node.WRAP, node.GUARD
local each_protected = wake.each_protected
local time_impl, recv_impl, send_impl = basic.time_impl, recv.impl, send.impl
local try_first = core.channel_try_first_fn(OP, send_impl)
local withdraw_all, NOMSG = send.withdraw_all, recv.NOMSG

local make_waker -- (below)

-- Calls fn(...) (a guard's or with_nack's function) for st's perform. Once
-- the perform made nacks, a cancel of the task while fn waits must fire
-- them: fn then runs in a coroutine whose waits the task forwards, with the
-- perform's waker object added to each (a cancel takes it back: abandoned).
local function call_watched(st, fn, ...)
  if #st.nacks == 0 then return fn(...) end
  local co = create(fn)
  local r = pack(resume(co, ...))
  local w
  while true do
    if not r[1] then error(r[2], 0) end
    if costatus(co) == "dead" then return unpack(r, 2, r.n) end
    w = w or make_waker(st)
    local recvt, given = {}, r[2]
    if type(given) == "table" then
      for i = 1, #given do recvt[i] = given[i] end
    end
    recvt[#recvt + 1] = w
    r = pack(resume(co, yield(recvt, r[3], unpack(r, 4, r.n))))
  end
end

-- Flattens op into st.insts: one instance per base operation, each with its
-- wrap functions (innermost first, as a list) and the nack conditions of the
-- with_nack nodes it sits under. Guards and with_nack functions run here.
local function instantiate(st, n, wraps, nacks)
  local kind = n.kind
  if kind == BASE then
    local inst = { node = n, wraps = wraps, nacks = nacks }
    if n.impl == time_impl then
      inst.deadline = n.b and monotime() + n.a or n.a
    end
    st.insts[#st.insts + 1] = inst
  elseif kind == CHOICE then
    for i = 1, n.n do instantiate(st, n.ops[i], wraps, nacks) end
  elseif kind == WRAP then
    instantiate(st, n.op, { f = n.f, next = wraps }, nacks)
  elseif kind == GUARD then
    local o = call_watched(st, n.fn)
    if not is_op(o) then
      error("cosock.op: the guard function returned " .. type(o) .. ", not an operation", 0)
    end
    instantiate(st, o, wraps, nacks)
  else -- NACK
    local c = cond.cond()
    st.nacks[#st.nacks + 1] = c
    local o = call_watched(st, n.fn, c:wait_op())
    if not is_op(o) then
      error("cosock.op: the with_nack function returned " .. type(o) .. ", not an operation", 0)
    end
    instantiate(st, o, wraps, { c = c, next = nacks })
  end
end

-- Signals c unless it is the nack of a with_nack on chosen's path.
local function fire_nack(c, chosen)
  local n = chosen and chosen.nacks
  while n do
    if n.c == c then return end
    n = n.next
  end
  c:signal()
end

-- Signals the nack of every with_nack not on chosen's path (all of them when
-- chosen is nil), each one even when another raised.
local function fire_nacks(st, chosen)
  each_protected(st.nacks, nil, fire_nack, chosen)
end

-- The wraps applied to the results, innermost (the list's head) first; the
-- outermost is a tail call. Nothing is allocated before the first wrap has
-- the results (a message taken is then the program's).
local function apply_wraps(inst, r)
  local w = inst.wraps
  if w == nil then return unpack(r, 1, r.n) end
  while w.next do
    r = pack(w.f(unpack(r, 1, r.n)))
    w = w.next
  end
  return w.f(unpack(r, 1, r.n))
end

-- The chosen operation has happened (a message taken, a timer handled): its
-- results are returned even should firing the nacks raise, once every nack
-- was signalled (each_protected).
local function commit(st, inst, r)
  st.done = true
  if not pcall(fire_nacks, st, inst) then pcall(fire_nacks, st, inst) end -- (again: see COND:signal)
  return apply_wraps(inst, r)
end

-- The loop's cleanup of a wait that did not end in the perform itself: a
-- cancel of the performing task (or its removal by a failed park).
local function unblock_inst(inst, st)
  local unblock = inst.node.impl.unblock
  if unblock then unblock(inst, st) end
end

local function abandoned(st)
  if st.done then return end
  st.done = true
  local ok, err = pcall(withdraw_all, st, nil)
  local ok2, err2 = pcall(each_protected, st.blocked, nil, unblock_inst, st)
  fire_nacks(st, st.committed)
  if not ok then error(err, 0) end
  if not ok2 then error(err2, 0) end
end

-- The perform's own waker object, always waited on: conditions wake it, and
-- its setwaker(_, nil) tells a cancel (the current task is another one, or
-- none) from the loop resuming the performer.
function make_waker(st)
  local w = {}
  function w.setwaker(_, _, fn)
    if fn ~= nil then
      if st.woken then -- a hub fired before the loop gave the waker
        st.woken = false
        fn()
        return
      end
      st.wake = fn
      return
    end
    st.wake = false
    if not st.waking and current_task() ~= st.task then abandoned(st) end
  end
  return w
end

-- Receives alone (one, or a choice of receives without wraps): perform's
-- wait and tries, with only what they need. nodes: the recv nodes in order.
local NONE = {}
local function block_all(nodes, st)
  for i = 1, #nodes do recv_impl.block(nodes[i], st) end
end

local solo_wait, solo_recvt = recv.solo_wait, recv.solo_recvt

-- Waits for one of the receives of op (nodes: op.fast) and returns its
-- results: as a select on the receivers while nobody else waits on them
-- (the solo way, src: cosock.op.recv), else through their hubs.
local function recv_wait(op, nodes)
  local n = #nodes
  local recvt = op.solos
  if recvt == nil then
    recvt = solo_recvt(nodes)
    op.solos = recvt
  end
  while solo_wait(nodes, recvt) do
    for i = 1, n do
      local a, b = nodes[i].b()
      if a ~= NOMSG then -- (a message, or nil, "closed": returned as they came)
        if b == nil then return a end
        return a, b
      end
    end
  end
  -- (every field a wake sets exists from the start: setting it then
  -- allocates nothing, and cannot fail)
  local st = { task = current_task(), offers = NONE, nacks = NONE, offering = NONE, blocked = nodes,
    wake = false, woken = false, waking = false, done = false }
  local recvt = { make_waker(st) }
  while true do
    st.woken = false
    local ok, err = pcall(block_all, nodes, st)
    if not ok then -- (no perform may stay in a hub)
      abandoned(st)
      error(err, 0)
    end
    local _, _, err = yield(recvt)
    for i = 1, n do recv_impl.unblock(nodes[i], st) end
    wait_end(err) -- (the end every wait has, once the hubs are left)
    st.done = true
    for i = 1, n do
      local a, b = nodes[i].b()
      if a ~= NOMSG then -- (a message, or nil, "closed": returned as they came)
        if b == nil then return a end
        return a, b
      end
    end
    st.done = false
  end
end

-- An operation with no guard, with_nack or sleep in it instantiates the same
-- way at every perform: its flat list of instances is kept (op.flat), for the
-- first tries, which need no per-perform state. false: not such an operation.
-- (An operation of receives alone, node.fast, never gets here.)
local function static_flat(n, wraps, out)
  local kind = n.kind
  if kind == BASE then
    if n.impl == time_impl and n.b then return false end -- sleep
    if wraps == nil then
      out[#out + 1] = n
    else
      out[#out + 1] = { node = n, wraps = wraps, deadline = n.deadline }
    end
  elseif kind == CHOICE then
    for i = 1, n.n do
      if not static_flat(n.ops[i], wraps, out) then return false end
    end
  elseif kind == WRAP then
    return static_flat(n.op, { f = n.f, next = wraps }, out)
  else
    return false
  end
  return out
end

-- Fills st.recvt, st.sendt and st.timeout from every instance; returns the
-- instance of a send that completed at once (its results in st.result), if any.
local function prepare_wait(st, insts)
  st.recvt, st.sendt, st.timeout, st.seen = {}, {}, nil, {}
  for i = 1, #insts do
    local inst = insts[i]
    if inst.node.impl == send_impl then
      local r = send_impl.offer(inst, st)
      if r ~= nil then
        st.result = r
        return inst
      end
    end
  end
  for i = 1, #insts do
    local inst = insts[i]
    local block = inst.node.impl.block
    if block then
      st.blocked[#st.blocked + 1] = inst -- (first: a failed block is unblocked)
      block(inst, st)
    end
  end
end

local function perform(o, task, tried)
  local st = { insts = {}, nacks = {}, task = task, offers = {}, blocked = {},
    wake = false, woken = false, waking = false, done = false, committed = false }
  local ok, err = compat.pcall(instantiate, st, o, nil, nil) -- (a guard may wait, also on 5.1)
  if not ok then
    fire_nacks(st, nil)
    error(err, 0)
  end
  local insts = st.insts
  local waker
  while true do
    for i = 1, tried and 0 or #insts do
      local inst = insts[i]
      local r = inst.node.impl.try(inst)
      if r ~= nil then return commit(st, inst, r) end
    end
    tried = false
    -- Wait: offers first (so that receives know about them), then the rest.
    -- Should that fail (memory), no offer may stay in a line.
    st.offers, st.offering, st.blocked, st.committed, st.woken = {}, {}, {}, false, false
    local ok2, done = pcall(prepare_wait, st, insts)
    if not ok2 then
      abandoned(st)
      error(done, 0)
    end
    if done ~= nil then -- a send completed without waiting after all
      withdraw_all(st, nil)
      return commit(st, done, st.result)
    end
    waker = waker or make_waker(st)
    st.recvt[#st.recvt + 1] = waker
    local _, _, err = yield(st.recvt, st.sendt, st.timeout)
    for _, inst in pairs(st.blocked) do
      local unblock = inst.node.impl.unblock
      if unblock then unblock(inst, st) end
    end
    local chosen = st.committed
    withdraw_all(st, chosen)
    if chosen then return commit(st, chosen, chosen.node.impl.finish(chosen)) end
    wait_end(err) -- (the end every wait has, once what it chose is taken)
  end
end

--- op:perform() -> the chosen operation's results, after its wrap functions.
--- Only in a cosock task (or a coroutine whose yields a task forwards).
function OP:perform()
  -- Receives alone, the commonest perform, and a lone send on a sender
  -- without a timeout are done in one C call that also checks self and the
  -- task (src/features/channel.c, try_first): it tries the receives and,
  -- with nothing there and nobody else waiting on their receivers, waits
  -- parked in their channels; the send is the sender's own (it waits in line).
  -- Once a message is taken nothing of ours that could fail runs before the
  -- caller has it: no call, no allocation (an error there would lose it;
  -- the watchdog does not interrupt cosock's code).
  local a, b = try_first(self)
  while a == NOMSG and b == 4 do a, b = try_first(self) end -- (woken with nothing there)
  if a ~= NOMSG then
    if b == nil then return a end
    return a, b
  end
  if b == 1 then argerror(1, "perform", "cosock.op operation expected, got " .. type(self)) end
  if b == 2 then error("cosock.op: perform must be called from a cosock task", 2) end
  if b == 0 then return recv_wait(self, self.fast) end
  local impl = self.impl
  if impl == send_impl then
    local tx = self.a
    if rawget(tx, "timeout") == nil then -- (where try_first does not send: see OP_PARKS)
      if sender_send(tx, self.b) then return true end
      return nil, "closed"
    end
    -- (a sender with a timeout: perform's wait, which leaves it alone)
    local ok, err = try_send(tx, self.b)
    if ok then return true end
    if err == "closed" then return nil, "closed" end
    return perform(self, current_task(), true)
  end
  local task = current_task()
  if self.kind == BASE and not (impl == time_impl and self.b) then
    -- One base operation (not a sleep): its node is its own instance.
    local r = impl.try(self)
    if r == nil then return perform(self, task, true) end
    return unpack(r, 1, r.n)
  end
  local flat = self.flat
  if flat == nil then
    flat = static_flat(self, nil, {})
    self.flat = flat
  end
  if flat then -- the first tries, without instantiating
    local n = #flat
    for i = 1, n do
      local inst = flat[i]
      local r = inst.node.impl.try(inst)
      if r ~= nil then return apply_wraps(inst, r) end
    end
    -- A lone (wrapped) send waits as the channel's own send does.
    if n == 1 then
      local inst = flat[1]
      local impl1 = inst.node.impl
      if impl1 == send_impl and rawget(inst.node.a, "timeout") == nil then
        return apply_wraps(inst, impl1.wait(inst))
      end
    end
  end
  return perform(self, task, flat ~= false)
end

return { perform = OP.perform }
