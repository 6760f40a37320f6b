--- cosock.op.sources: operations on the loop's other objects:
--- readable(sock) / writable(sock), join(handle), timer(t). Performs waiting
--- on one object that takes one waker per kind share it (the shared hubs).

local core = require "cosock.core"
local compat = require "cosock.compat"
-- LuaSocket, also when a program has put cosock.socket in its place
-- (package.loaded.socket = cosock.socket), where this module loads on first
-- use: LuaSocket's functions are then those of its C part, socket.core
-- (LuaSocket's socket is that table, with Lua helpers added).
local luasocket = require "socket"
if luasocket == package.loaded["cosock.socket"] then luasocket = require "socket.core" end
local node = require "cosock.op.node"
local wake = require "cosock.op.wake"
local send = require "cosock.op.send"

local type, pcall, getmetatable, setmetatable = type, pcall, getmetatable, setmetatable
local pack = compat.pack
local timer_info, timer_methods, handle_mt = core.timer_info, core.timer_methods, core.thread_handle
local close_wakes = core.close_wakes
local argerror, base = node.argerror, node.base
local wake_set, SENT = wake.wake_set, send.SENT

local M = {}

-- Adds obj to one of the perform's wait lists once.
local function watch(st, list, obj)
  local seen = st.seen
  if seen[obj] then return end
  seen[obj] = true
  list[#list + 1] = obj
end

-- readable(sock) / writable(sock): ready when the cosock socket can be read
-- (buffered data counts) / written; the result is the socket.
local io_impl = {}

local function check_sock(fname, sock)
  if type(sock) ~= "table" or sock.inner_sock == nil or type(sock.setwaker) ~= "function" then
    argerror(1, fname, "cosock socket expected, got " .. type(sock), 3)
  end
end

function M.readable(sock)
  check_sock("readable", sock)
  return base(io_impl, sock, true)
end

function M.writable(sock)
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

function M.join(handle)
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

function M.timer(t)
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

return M
