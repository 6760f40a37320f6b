--- cosock.op: Concurrent ML operations over cosock's channels, sockets, task
--- handles and timers (after Snabb's fibers; doc/op.md).
---
--- An operation is a value that describes a possible communication; op:perform()
--- does it, waiting in the loop as every cosock call does. Combinators:
---   choice(...)      the first of several to become possible (left-biased)
---   op:wrap(f)       f applied to the results, if and when op is chosen
---   guard(fn)        fn() -> op, called at each perform
---   with_nack(fn)    fn(nack) -> op; nack (an op) becomes ready when the op
---                    fn returned is not the one chosen (or the task is cancelled)
---   always(...), never(), sleep(s), deadline(t)
--- Base operations: send(tx, v), recv(rx), readable(sock), writable(sock),
--- join(handle), timer(t), cond():wait_op().
---
--- How a perform works: try each base operation in argument order without
--- waiting; the first that succeeds is the one chosen. Otherwise wait once in
--- the loop on the union of what they wait on (recvt, sendt, the nearest
--- deadline), then try again in order. A send that cannot complete at once
--- offers its message by joining the channel's line of senders (a proxy place
--- in line, src/channel.c); a receiver that takes it commits the perform at
--- that moment, and the perform's other offers leave their lines before the
--- receive returns, so one perform never completes two operations.

local core = require "cosock.core"
core.open "timer" -- (its C functions: added to cosock.core on first use)
local channel = require "cosock.channel"
local luasocket = require "socket"

local type, error, tostring, getmetatable, setmetatable, select, rawget, pairs, pcall =
  type, error, tostring, getmetatable, setmetatable, select, rawget, pairs, pcall
local compat = require "cosock.compat"
local pack, unpack = compat.pack, compat.unpack
local yield, resume, create, costatus = coroutine.yield, coroutine.resume, coroutine.create,
  coroutine.status

local monotime, current_task = core.monotime, core.current_task
local sender_send = channel.sender.send
-- A send / receive that never waits, and a send that waits without the
-- sender's timeout: the ends' own timeouts are left alone (src/channel.c).
local try_send, try_receive, send_untimed = core.channel_try_send, core.channel_try_receive,
  core.channel_send_untimed
local rx_ready = core.channel_ready
local timer_info, timer_methods, handle_mt = core.timer_info, core.timer_methods, core.thread_handle

local m = {}

local OP = {}
OP.__index = OP
OP.__name = "cosock.op"

local function is_op(x) return getmetatable(x) == OP end
m.is_op = is_op

-- Raises at the caller of the public function (level: of argerror's caller).
local function argerror(n, fname, msg, level)
  error(("bad argument #%d to '%s' (%s)"):format(n, fname, msg), (level or 2) + 1)
end

local function check_fn(fname, fn)
  if type(fn) ~= "function" then argerror(1, fname, "function expected, got " .. type(fn), 3) end
end

-- Node kinds. A base node holds its impl (the table of try / block / finish
-- functions below) and up to two arguments.
local BASE, CHOICE, WRAP, GUARD, NACK = 1, 2, 3, 4, 5

-- A base node is also its own instance for perform's first, non-waiting tries
-- (node.node = node: the try functions read inst.node.a).
local function base(impl, a, b)
  -- (node and res made here: setting them later would grow the table)
  local node = setmetatable({ kind = BASE, impl = impl, a = a, b = b, node = false, res = false }, OP)
  node.node = node
  return node
end

---------------------------------------------------------------------------
-- Combinators
---------------------------------------------------------------------------

--- choice(...) -> op: the first of the operations to become possible. With
--- several possible at once, the first in argument order. choice() never completes.
function m.choice(...)
  local n = select("#", ...)
  local ops = { ... }
  for i = 1, n do
    local o = ops[i]
    if not is_op(o) then argerror(i, "choice", "cosock.op operation expected, got " .. type(o)) end
  end
  return setmetatable({ kind = CHOICE, ops = ops, n = n }, OP)
end

--- op:wrap(f) -> op: when op is chosen, perform returns f(op's results).
function OP:wrap(f)
  if not is_op(self) then argerror(1, "wrap", "cosock.op operation expected, got " .. type(self)) end
  check_fn("wrap", f)
  return setmetatable({ kind = WRAP, op = self, f = f }, OP)
end

--- guard(fn) -> op: at each perform, fn() makes the operation to perform.
function m.guard(fn)
  check_fn("guard", fn)
  return setmetatable({ kind = GUARD, fn = fn }, OP)
end

--- with_nack(fn) -> op: at each perform, fn(nack) makes the operation; nack is
--- an operation that becomes ready when that operation is not the one chosen.
function m.with_nack(fn)
  check_fn("with_nack", fn)
  return setmetatable({ kind = NACK, fn = fn }, OP)
end

---------------------------------------------------------------------------
-- Conditions (one-shot): the nacks are made of these too
---------------------------------------------------------------------------

local COND = {}
COND.__index = COND
COND.__name = "cosock.op.cond"

local cond_impl = {}

--- cond() -> c: a one-shot condition. c:signal() makes c:wait_op() ready, for
--- every perform, now and later. signal may be called anywhere (also outside a
--- task); signalling twice does nothing more.
function m.cond()
  -- waiters: the performs waiting, in the order they came (list), and which
  -- of them still wait (set; one that moved on is dropped lazily).
  return setmetatable({ signaled = false, waiters = {}, list = {}, live = 0 }, COND)
end

-- Wakes the perform of st: calls the loop's waker of its waker object, or,
-- before the loop gave that, marks it woken (its setwaker then calls the
-- waker at once). The loop's waker first takes itself back (setwaker(kind,
-- nil)) from the waking task: st.waking tells the waker object that this is
-- no cancel. The loop's waker makes the task ready even when that call
-- raises (src/park.c): a wake that raised still woke.
local function wake_state(st)
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

-- The fan-outs (a cond's signal, a hub's fire) wake their waiters in the
-- order they came, each leaving the set only once woken: an error part-way
-- (memory, the watchdog's interrupt, a raising waker) leaves the others in
-- it, and calling the fan-out again wakes them. Returns when all are woken.
local function wake_set(owner, set, list)
  for i = 1, #list do
    local st = list[i]
    if set[st] then
      wake_state(st)
      set[st] = nil
      owner.live = owner.live - 1
    end
  end
end

local EMPTY = setmetatable({}, { __newindex = function() error("cosock.op: internal: EMPTY written", 2) end })

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
  c.waiters[st] = true
  c.live = c.live + 1
  local list = c.list
  if #list >= 2 * c.live + 8 then -- mostly performs that moved on: compact
    local j = 0
    for i = 1, #list do
      local w = list[i]
      list[i] = nil
      if c.waiters[w] and w ~= st then
        j = j + 1
        list[j] = w
      end
    end
  end
  list[#list + 1] = st
end

function cond_impl.unblock(inst, st)
  local c = inst.node.a
  if c.waiters[st] then
    c.waiters[st] = nil
    c.live = c.live - 1
  end
end

---------------------------------------------------------------------------
-- Base operations
---------------------------------------------------------------------------

local NOTHING = { n = 0 }

-- always(...): ready at once, with these values.
local always_impl = {}
function always_impl.try(inst) return inst.node.a end

function m.always(...)
  return base(always_impl, pack(...))
end

-- never(): never ready.
local never_impl = {}
function never_impl.try() return nil end

function m.never()
  return base(never_impl)
end

-- sleep(s) / deadline(t): ready once the loop's clock (cosock.timer.now())
-- reaches the deadline; sleep's is taken when the perform starts.
local time_impl = {}
function time_impl.try(inst)
  if monotime() >= inst.deadline then return NOTHING end
end
function time_impl.block(inst, st)
  local left = inst.deadline - monotime()
  if left < 0 then left = 0 end
  if left ~= math.huge and (st.timeout == nil or left < st.timeout) then st.timeout = left end
end

function m.sleep(s)
  if type(s) ~= "number" then argerror(1, "sleep", "number expected, got " .. type(s)) end
  if not (s >= 0) or s == math.huge then
    argerror(1, "sleep", "finite number >= 0 expected, got " .. tostring(s))
  end
  return base(time_impl, s, true)
end

function m.deadline(t)
  if type(t) ~= "number" then argerror(1, "deadline", "number expected, got " .. type(t)) end
  if t ~= t then argerror(1, "deadline", "number expected, got nan") end
  local node = base(time_impl, t, false)
  node.deadline = t
  return node
end

-- Adds obj to one of the perform's wait lists once.
local function watch(st, list, obj)
  local seen = st.seen
  if seen[obj] then return end
  seen[obj] = true
  list[#list + 1] = obj
end

-- recv(rx): a message; nil, "closed" once the channel is closed and empty.
local recv_impl = {}

local function is_end(x, methods)
  local mt = getmetatable(x)
  return type(x) == "table" and type(mt) == "table" and mt.__index == methods
end

-- recv(rx) is the same value for the same receiver (an operation is
-- immutable): kept while rx lives.
local recv_ops = setmetatable({}, { __mode = "k" })

function m.recv(rx)
  local o = recv_ops[rx]
  if o then return o end
  if not is_end(rx, channel.receiver) then
    argerror(1, "recv", "cosock.channel receiver expected, got " .. type(rx))
  end
  o = base(recv_impl, rx)
  recv_ops[rx] = o
  return o
end


-- A receive that never waits. The results go to a table kept in the
-- instance (perform unpacks them at once).
function recv_impl.try(inst)
  local rx = inst.node.a
  if not rx_ready(rx) then return nil end
  -- (the table first: nothing may allocate, and so fail, once the message
  -- is taken)
  local r = inst.res
  if not r then
    r = { false, false, n = 0 }
    inst.res = r
  end
  local a, b = try_receive(rx) -- (a message, or nil, "closed")
  if b == nil then r.n, r[1] = 1, a else r.n, r[1], r[2] = 2, a, b end
  return r
end

-- A receiver takes one waker; performs waiting to receive on it share one,
-- the hub's. When the receiver becomes ready the hub wakes every perform
-- waiting on it, in the order they came: each tries again (the first takes
-- the message), the others wait again.
local hubs = setmetatable({}, { __mode = "k" })
local rx_setwaker = channel.receiver.setwaker

local function hub_fire(hub)
  -- Should this raise, the channel gives the waker back (src/channel.c):
  -- the hub stays armed for the performs not woken yet.
  wake_set(hub, hub.set, hub.list)
  hub.list = {}
end

-- Whether the hub's waker is the receiver's now: read from the channel
-- (link.waker), not kept in a flag that an error could leave stale.
local function armed(hub, rx)
  return rx.link.waker == hub.fire
end

function recv_impl.block(inst, st)
  local rx = inst.node.a
  -- A rendezvous offer of this very perform makes rx ready; it must not wake
  -- the perform (it cannot pair with itself), or the wait would spin.
  if st.offering[rx.link] then return end
  local hub = hubs[rx]
  if hub == nil then
    hub = { list = {}, set = {}, live = 0 }
    hub.fire = function() hub_fire(hub) end
    hubs[rx] = hub
  end
  if hub.set[st] then return end
  local list = hub.list
  if #list >= 2 * hub.live + 8 then -- mostly performs that moved on: compact
    local j = 0
    for i = 1, #list do
      local w = list[i]
      list[i] = nil
      if hub.set[w] then
        j = j + 1
        list[j] = w
      end
    end
  end
  hub.set[st] = true
  hub.live = hub.live + 1
  list[#list + 1] = st
  if not armed(hub, rx) then
    local ok, err = pcall(rx_setwaker, rx, "recvr", hub.fire)
    if not ok then -- (a task waits on rx in a plain receive or select)
      hub.set[st] = nil
      hub.live = hub.live - 1
      error(err, 0)
    end
  end
end

function recv_impl.unblock(inst, st)
  local rx = inst.node.a
  local hub = hubs[rx]
  if hub == nil or not hub.set[st] then return end
  hub.set[st] = nil
  hub.live = hub.live - 1
  if hub.live == 0 then
    hub.list = {}
    if armed(hub, rx) then
      rx_setwaker(rx, "recvr", nil)
    end
  end
end

-- send(tx, v): true once the message is queued (a rendezvous: taken by a
-- receiver); nil, "closed" when the channel is closed.
local send_impl = {}

function m.send(tx, v)
  if not is_end(tx, channel.sender) then
    argerror(1, "send", "cosock.channel sender expected, got " .. type(tx))
  end
  return base(send_impl, tx, v)
end

local SENT, CLOSED = { true, n = 1 }, { nil, "closed", n = 2 }

local function send_result(ok, err)
  if ok then return SENT end
  if err == "closed" then return CLOSED end
  return nil
end

function send_impl.try(inst)
  return send_result(try_send(inst.node.a, inst.node.b))
end

-- The send itself, waiting (the sender has no timeout of its own).
function send_impl.wait(inst)
  local ok, err = sender_send(inst.node.a, inst.node.b)
  return send_result(ok, err) or CLOSED
end

-- Withdraws a send's offer from its line (unless a receiver took it already).
-- (out of line first, then forgotten: an error in between leaves it to try again)
local function withdraw(inst)
  local proxy = inst.proxy
  if proxy ~= nil then
    proxy:setwaker("sendr", nil)
    inst.proxy = nil
  end
end

-- Calls fn(x, a) for each x of list but skip, going on past errors; raises
-- the first error once every call was made. A fan-out whose steps may fail
-- (memory, the watchdog's interrupt) so still makes each of its steps.
local function each_protected(list, skip, fn, a)
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

local function withdraw_all(st, except)
  each_protected(st.offers, except, withdraw)
end

-- The offer: a send run in a coroutine of its own waits in line through the
-- channel's proxy (what a send in a forwarded coroutine does); the proxy goes
-- to the loop inside a wrapper whose waker commits this branch first.
function send_impl.offer(inst, st)
  local tx = inst.node.a
  local co = create(send_untimed)
  local r = pack(resume(co, tx, inst.node.b))
  if not r[1] then error(r[2], 0) end
  if costatus(co) == "dead" then return send_result(r[2], r[3]) end
  local proxy = r[3][1]
  inst.co, inst.proxy = co, proxy
  st.offers[#st.offers + 1] = inst
  st.offering[tx.link] = true
  local wrapper = {}
  function wrapper.setwaker(_, kind, fn)
    if fn == nil then
      if inst.proxy == proxy then withdraw(inst) end
      return
    end
    proxy:setwaker(kind, function()
      -- A receiver took the message (or the channel closed): this branch is
      -- chosen now, and the perform's other offers leave their lines at once.
      if not st.committed and not st.done then
        st.committed = inst
        inst.proxy = nil
        pcall(withdraw_all, st, inst) -- (the perform withdraws them again when it resumes)
      end
      fn()
    end)
  end
  st.sendt[#st.sendt + 1] = wrapper
end

function send_impl.finish(inst)
  local r = pack(resume(inst.co))
  if not r[1] then error(r[2], 0) end
  return send_result(r[2], r[3]) or CLOSED
end

-- readable(sock) / writable(sock): ready when the cosock socket can be read
-- (buffered data counts) / written; the result is the socket.
local io_impl = {}

local function check_sock(fname, sock)
  if type(sock) ~= "table" or sock.inner_sock == nil or type(sock.setwaker) ~= "function" then
    argerror(1, fname, "cosock socket expected, got " .. type(sock), 3)
  end
end

function m.readable(sock)
  check_sock("readable", sock)
  return base(io_impl, sock, true)
end

function m.writable(sock)
  check_sock("writable", sock)
  return base(io_impl, sock, false)
end

-- Performs waiting on one object that takes one waker per kind (a socket,
-- a timer) share it: the first to wait (the leader) waits on the object
-- itself, the others on the perform's own waker object, in the object's
-- hub; when the leader stops waiting (woken, cancelled) it wakes them, and
-- each tries again (the first to wait again leads).
local shared = setmetatable({}, { __mode = "k" })

local function shared_block(st, list, obj, kind)
  local of = shared[obj]
  if of == nil then
    of = {}
    shared[obj] = of
  end
  local hub = of[kind]
  if hub == nil then
    hub = { list = {}, set = {}, live = 0, leader = false }
    of[kind] = hub
  end
  if hub.leader == st or hub.set[st] then return end
  if not hub.leader then
    hub.leader = st
    watch(st, list, obj)
    return
  end
  hub.list[#hub.list + 1] = st
  hub.set[st] = true
  hub.live = hub.live + 1
end

local function shared_unblock(st, obj, kind)
  local of = shared[obj]
  local hub = of and of[kind]
  if hub == nil then return end
  if hub.leader ~= st then
    if hub.set[st] then
      hub.set[st] = nil
      hub.live = hub.live - 1
    end
    return
  end
  hub.leader = false
  if hub.live > 0 then
    if not pcall(wake_set, hub, hub.set, hub.list) then wake_set(hub, hub.set, hub.list) end
  end
  if #hub.list > 0 then hub.list = {} end
end

-- A closed socket: never ready, and not waited on (the loop would find it
-- ready at once: a busy wait), unless closing wakes the socket's waiters
-- (cosock.set_close_wakes(true)): then ready.
local function closed(inner)
  local getfd = inner.getfd
  return getfd ~= nil and getfd(inner) == -1
end

local close_wakes = core.close_wakes

function io_impl.try(inst)
  local sock, reading = inst.node.a, inst.node.b
  local inner = sock.inner_sock
  if closed(inner) then
    if close_wakes() then return { sock, n = 1 } end
    return nil
  end
  local r, w
  if reading then r = luasocket.select({ inner }, nil, 0) else r, w = luasocket.select(nil, { inner }, 0) end
  local ready = reading and r or w
  if ready ~= nil and ready[1] ~= nil then return { sock, n = 1 } end
end

function io_impl.block(inst, st)
  local sock, reading = inst.node.a, inst.node.b
  if closed(sock.inner_sock) then return end
  shared_block(st, reading and st.recvt or st.sendt, sock, reading)
end

function io_impl.unblock(inst, st)
  shared_unblock(st, inst.node.a, inst.node.b)
end

-- join(handle): ready once the task ended; the results of handle:join().
local join_impl = {}

function m.join(handle)
  if getmetatable(handle) ~= handle_mt then
    argerror(1, "join", "cosock thread handle expected, got " .. type(handle))
  end
  return base(join_impl, handle)
end

function join_impl.try(inst)
  local h = inst.node.a
  if h:is_alive() then return nil end
  return pack(h:join(0))
end

function join_impl.block(inst, st)
  watch(st, st.recvt, inst.node.a)
end

-- timer(t): ready once the cosock.timer timer is due; performing it handles
-- it (true). A cancelled timer gives nil, "cancelled"; a oneshot handled
-- already nil, "handled".
local timer_impl = {}

function m.timer(t)
  local mt = getmetatable(t)
  if type(mt) ~= "table" or mt.__index ~= timer_methods then
    argerror(1, "timer", "cosock.timer timer expected, got " .. type(t))
  end
  return base(timer_impl, t)
end

function timer_impl.try(inst)
  local t = inst.node.a
  local state = timer_info(t)
  if state == "due" then
    t:handled()
    return SENT
  end
  if state ~= "pending" then return { nil, state, n = 2 } end
end

function timer_impl.block(inst, st)
  shared_block(st, st.recvt, inst.node.a, true)
end

function timer_impl.unblock(inst, st)
  shared_unblock(st, inst.node.a, true)
end

---------------------------------------------------------------------------
-- perform
---------------------------------------------------------------------------

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
local function instantiate(st, node, wraps, nacks)
  local kind = node.kind
  if kind == BASE then
    local inst = { node = node, wraps = wraps, nacks = nacks }
    if node.impl == time_impl then
      inst.deadline = node.b and monotime() + node.a or node.a
    end
    st.insts[#st.insts + 1] = inst
  elseif kind == CHOICE then
    for i = 1, node.n do instantiate(st, node.ops[i], wraps, nacks) end
  elseif kind == WRAP then
    instantiate(st, node.op, { f = node.f, next = wraps }, nacks)
  elseif kind == GUARD then
    local o = call_watched(st, node.fn)
    if not is_op(o) then
      error("cosock.op: the guard function returned " .. type(o) .. ", not an operation", 0)
    end
    instantiate(st, o, wraps, nacks)
  else -- NACK
    local c = m.cond()
    st.nacks[#st.nacks + 1] = c
    local o = call_watched(st, node.fn, c:wait_op())
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

-- A receive alone: perform's wait and tries, with only what they need.
local NONE = {}
local function lone_recv(node, task)
  local rx = node.a
  -- (every field a wake sets exists from the start: setting it then
  -- allocates nothing, and cannot fail)
  local st = { task = task, offers = NONE, nacks = NONE, offering = NONE, blocked = { node },
    wake = false, woken = false, waking = false, done = false }
  local recvt = { make_waker(st) }
  while true do
    st.woken = false
    recv_impl.block(node, st)
    yield(recvt)
    recv_impl.unblock(node, st)
    if rx_ready(rx) then
      st.done = true
      return try_receive(rx) -- (a tail call: see perform)
    end
  end
end

-- An operation with no guard, with_nack or sleep in it instantiates the same
-- way at every perform: its flat list of instances is kept (op.flat), for the
-- first tries, which need no per-perform state. false: not such an operation.
local function static_flat(node, wraps, out)
  local kind = node.kind
  if kind == BASE then
    if node.impl == time_impl and node.b then return false end -- sleep
    if wraps == nil then
      out[#out + 1] = node
    else
      out[#out + 1] = { node = node, wraps = wraps, deadline = node.deadline }
    end
  elseif kind == CHOICE then
    for i = 1, node.n do
      if not static_flat(node.ops[i], wraps, out) then return false end
    end
  elseif kind == WRAP then
    return static_flat(node.op, { f = node.f, next = wraps }, out)
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
    local ok, done = pcall(prepare_wait, st, insts)
    if not ok then
      abandoned(st)
      error(done, 0)
    end
    if done ~= nil then -- a send completed without waiting after all
      withdraw_all(st, nil)
      return commit(st, done, st.result)
    end
    waker = waker or make_waker(st)
    st.recvt[#st.recvt + 1] = waker
    yield(st.recvt, st.sendt, st.timeout)
    for _, inst in pairs(st.blocked) do
      local unblock = inst.node.impl.unblock
      if unblock then unblock(inst, st) end
    end
    local chosen = st.committed
    withdraw_all(st, chosen)
    if chosen then return commit(st, chosen, send_impl.finish(chosen)) end
  end
end

--- op:perform() -> the chosen operation's results, after its wrap functions.
--- Only in a cosock task (or a coroutine whose yields a task forwards).
function OP:perform()
  if not is_op(self) then argerror(1, "perform", "cosock.op operation expected, got " .. type(self)) end
  local task = current_task()
  if task == nil then error("cosock.op: perform must be called from a cosock task", 2) end
  local impl = self.impl
  if impl == recv_impl then -- the commonest perform, without a table
    -- The receive is a tail call: once the message is taken nothing of
    -- ours runs before the caller has it (an error there, the watchdog's
    -- interrupt, would lose it).
    if rx_ready(self.a) then return try_receive(self.a) end
    return lone_recv(self, task)
  elseif impl == send_impl then
    local tx = self.a
    local ok, err = try_send(tx, self.b)
    if ok then return true end
    if err == "closed" then return nil, "closed" end
    if rawget(tx, "timeout") ~= nil then return perform(self, task, true) end
    ok, err = sender_send(tx, self.b)
    if ok then return true end
    return nil, "closed"
  end
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
      local impl = inst.node.impl
      if impl == send_impl and rawget(inst.node.a, "timeout") == nil then
        return apply_wraps(inst, impl.wait(inst))
      end
    end
  end
  return perform(self, task, flat ~= false)
end

m.perform = OP.perform
m.op_methods = OP

return m
