--- cosock.op.recv: recv(rx), a message from a cosock channel; nil, "closed"
--- once the channel is closed and empty. The performs waiting on one receiver
--- share its one waker place through the receiver's hub.

local core = require "cosock.core"
local channel = require "cosock.channel"
local node = require "cosock.op.node"
local wake = require "cosock.op.wake"

local type, error, pcall, setmetatable = type, error, pcall, setmetatable
local yield = coroutine.yield
-- recv(rx) holds rx's bound try (node.b): a receive that never waits and
-- returns NOMSG when there is nothing to take (src/features/channel.c).
local try_fn, NOMSG = core.channel_try_fn, core.channel_nomsg
-- A perform parked in the channels by its first try (src/features/channel.c,
-- try_first) is woken out of its place by another that needs the receiver.
local unpark = core.channel_unpark
local wait_end = core.wait_end
local argerror, base, is_end = node.argerror, node.base, node.is_end
local wake_set, enlist = wake.wake_set, wake.enlist

local M = { NOMSG = NOMSG }

local recv_impl = {}
M.impl = recv_impl

-- recv(rx) is the same value for the same receiver (an operation is
-- immutable): kept while rx lives.
local recv_ops = setmetatable({}, { __mode = "k" })

function M.recv(rx)
  local o = recv_ops[rx]
  if o then return o end
  if not is_end(rx, channel.receiver) then
    argerror(1, "recv", "cosock.channel receiver expected, got " .. type(rx))
  end
  o = base(recv_impl, rx, try_fn(rx))
  o.fast, o.res, o.chans = { o }, false, false -- (res: recv_impl.try's; chans: try_first's)
  recv_ops[rx] = o
  return o
end

-- A receive that never waits. The results go to a table kept in the
-- instance (perform unpacks them at once).
function recv_impl.try(inst)
  -- (the table first: nothing may allocate, and so fail, once the message
  -- is taken)
  local r = inst.res
  if not r then
    r = { false, false, n = 0 }
    inst.res = r
  end
  local a, b = inst.node.b() -- (a message, or nil, "closed", or NOMSG)
  if a == NOMSG then return nil end
  if b == nil then r.n, r[1] = 1, a else r.n, r[1], r[2] = 2, a, b end
  return r
end

-- A receiver takes one waker; performs waiting to receive on it share one,
-- the hub's. When the receiver becomes ready the hub wakes every perform
-- waiting on it, in the order they came: each tries again (the first takes
-- the message), the others wait again.
local hubs = setmetatable({}, { __mode = "k" })
local rx_setwaker = channel.receiver.setwaker

-- Empties a hub's list in place (no table made per wake).
local function clear(list)
  for i = #list, 1, -1 do list[i] = nil end
end

local function hub_fire(hub)
  -- Should this raise, the channel gives the waker back (src/features/channel.c):
  -- the hub stays armed for the performs not woken yet.
  wake_set(hub, hub.set, hub.list)
  clear(hub.list)
end

-- Whether the hub's waker is the receiver's now: read from the channel
-- (link.waker), not kept in a flag that an error could leave stale.
local function armed(hub, rx)
  return rx.link.waker == hub.fire
end

-- A perform of receives alone whose receivers nobody else waits on waits
-- parked in their channels (its first try, try_first). Where it cannot (no
-- direct park: Lua 5.1, 5.2, LuaJIT, a -DCN_NO_DIRECT_PARK build) it
-- (solo_wait) waits on them the way a select does, through each receiver's
-- solo object, which gives the loop's waker to the receiver itself: no hub,
-- no waker object of the perform's. solo.on: such a perform may wait now
-- (the loop's setwaker(kind, nil), at its wake or its cancel, clears it once
-- the receiver took the waker back). A perform that then needs the hub
-- wakes it first (steal): it tries again and waits through the hub from
-- then on (a perform parked in the channels is woken the same way:
-- channel_unpark). A steal also takes back a waker that an error left on the
-- receiver (a loop's waker is called once: calling it again does nothing).
local solos = setmetatable({}, { __mode = "k" })
local waiting = core.channel_waiting

local function solo_of(rx)
  local solo = solos[rx]
  if solo == nil then
    solo = { on = false }
    function solo.setwaker(_, kind, fn)
      rx_setwaker(rx, kind, fn)
      if fn == nil then solo.on = false end
    end
    solos[rx] = solo
  end
  return solo
end

-- The solo objects of the receivers of nodes, each once (the wait list of
-- solo_wait).
function M.solo_recvt(nodes)
  local recvt, seen = {}, {}
  for i = 1, #nodes do
    local solo = solo_of(nodes[i].a)
    if not seen[solo] then
      seen[solo] = true
      recvt[#recvt + 1] = solo
    end
  end
  return recvt
end

-- Waits on the receivers of nodes (recvt: their solo_recvt) the solo way,
-- as one select; returns false (and waits not) when another waits on one of
-- them (a hub, a plain receive or select).
function M.solo_wait(nodes, recvt)
  for i = 1, #nodes do
    local rx = nodes[i].a
    local hub = hubs[rx]
    if (hub ~= nil and hub.live > 0) or solos[rx].on or waiting(rx.link) then return false end
  end
  for i = 1, #recvt do recvt[i].on = true end
  local _, _, err = yield(recvt)
  wait_end(err) -- (the end every wait has)
  return true
end

local function steal(rx)
  unpark(rx.link)
  local solo = solos[rx]
  if solo ~= nil and solo.on then
    local link = rx.link
    local w = link.waker -- (the loop's waker of the solo perform's task)
    if w ~= nil then
      w()
      if link.waker == w then rx_setwaker(rx, "recvr", nil) end
    end
    solo.on = false
  end
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
  enlist(hub, hub.set, st)
  if not armed(hub, rx) then
    local ok, err = pcall(steal, rx)
    if ok then ok, err = pcall(rx_setwaker, rx, "recvr", hub.fire) end
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
    clear(hub.list)
    if armed(hub, rx) then
      rx_setwaker(rx, "recvr", nil)
    end
  end
end

return M
