--- cosock.copas: copas 4.11's API on the cosock-native loop (doc/copas.md).
---
--- Every copas thread (addthread, a server's handler, a timer) is a cosock
--- task, so copas threads and cosock tasks share one loop. Sockets are the
--- program's own LuaSocket/LuaSec objects; each gets a private wrapper the
--- loop can park a task on (the C receive/send/wait of cosock.socket.wrap),
--- kept in a weak table. Timeouts are copas's: per socket and operation
--- (connect, send, receive), each limiting the whole call.
---
--- A program selects this module as `copas` with
---   lua -l cosock.copas.install program.lua
--- or by putting lua/copas-compat/ first on LUA_PATH.
---
--- How copas's rules are kept: the loop's end is counted here (finished():
--- threads alive, asleep without a time, servers, copas.timeout timers), and
--- copas.loop steps the loop (cosock.core.step) until copas's work and every
--- other task is done, the loop's stall read as "nothing left" while copas
--- steps it; sleep and wakeup use a channel per thread; close wakes the
--- tasks parked on the socket (cosock.core.wake) before closing it.

local core = require "cosock.core"
local cosock = require "cosock"
local channel = require "cosock.channel"
local wrap = require "cosock.socket.wrap"
local compat = require "cosock.compat"
-- LuaSocket, or (for a program without it: timers and threads only)
-- LuaSystem's clock, as copas does.
local has_socket, socket = pcall(require, "socket")
if not has_socket then socket = nil end

local spawn, yield, current_task = core.spawn, core.yield, core.current_task
local receive_c, send_c, wait = wrap.receive, wrap.send, wrap.wait
local wake_native, closing = core.wake, core.closing
local type, tostring, setmetatable, getmetatable, pcall, error, select, pairs, ipairs =
  type, tostring, setmetatable, getmetatable, pcall, error, select, pairs, ipairs
local xpcall, rawset, assert = xpcall, rawset, assert -- (print: the global, looked up at each call, as copas does)
local huge = math.huge
local co_create, co_resume, co_running, co_status =
  coroutine.create, coroutine.resume, coroutine.running, coroutine.status
local unpack = compat.unpack

local gettime = socket and socket.gettime or require("system").gettime
local UDP_DATAGRAM_MAX = socket and socket._DATAGRAMSIZE or 8192

local copas = {}
copas._COPYRIGHT = "cosock-native's copas API (MIT); copas is Copyright (C) Kepler Project, Thijs Schreijer"
copas._DESCRIPTION = "copas 4.11's API on the cosock-native loop"
copas._VERSION = "Copas 4.11.0 (cosock-native)"
copas.autoclose = true
copas.running = false
copas.gettime = gettime

local function weak(mode) return setmetatable({}, { __mode = mode or "k" }) end

---------------------------------------------------------------------------
-- Threads
---------------------------------------------------------------------------
-- A thread record: { co = the task's coroutine (once it ran), handle, name,
-- errh = its error handler, added = made by addthread (removethread works on
-- it), sleeping = nil | "timed" | "forever", tx/rx = its wakeup channel,
-- skt = the socket to close when it ends (autoclose), tmo = its copas.timeout
-- task, ste = useSocketTimeoutErrors, server/n = the server and count of a
-- handler (its name is made when asked). }
local REC = weak()          -- coroutine (a task's, or addthread's token) -> record
local token_of = weak("kv") -- record -> the coroutine addthread returned
local names = weak()        -- coroutine or socket -> name given
local live = {}             -- record -> true, while the thread runs
local client_of = weak()    -- accepted socket -> its handler's record (its name)
local autoclose_of = weak() -- socket -> the record that closes it when it ends

-- Counts for finished(): copas threads alive, those asleep without a time,
-- servers, copas.timeout timers; tasks of this module that are not threads.
local alive, lethargic, nservers, ntimeouts, internal = 0, 0, 0, 0, 0

local function running_co()
  return current_task() or co_running()
end

-- The record of the running thread; a cosock task (or the main thread) that
-- calls copas gets one that does not count as a copas thread.
local function me()
  local co = running_co()
  local rec = co and REC[co]
  if rec == nil then
    rec = { co = co, foreign = true }
    if co then REC[co] = rec end
  end
  return rec
end

local _deferror -- the default error handler (below)

-- Sockets a program dropped without closing them are closed by the garbage
-- collector; copas collects when its loop is idle. Here, once a thread
-- ended, a task looks every half second whether the loop was idle (no copas
-- socket call, at most IDLE_PASSES passes) and collects after a second of
-- that, unless copas's work is finished first (the task would only delay
-- the loop's end). A busy program collects as it allocates. (Collecting a
-- dropped socket early would close it under data its peer still sends.)
local gc_task
local IDLE_PASSES = 6
-- copas's socket calls so far (the idle check below; the fairness pass)
local calls, next_fair, FAIR_EVERY = 0, 64, 64
local function gc_settle(done)
  if done then
    if gc_task then
      gc_task:cancel()
      gc_task = nil
      internal = internal - 1
    end
  elseif not gc_task then
    internal = internal + 1
    gc_task = spawn(function()
      local quiet = 0
      repeat -- (idle: a second without a socket call, and few passes)
        local passes, before = core.stats().passes, calls
        yield(nil, nil, 0.5)
        if core.stats().passes - passes <= IDLE_PASSES and calls == before then
          quiet = quiet + 1
        else
          quiet = 0
        end
      until quiet >= 2
      gc_task = nil
      internal = internal - 1
      collectgarbage()
    end, "copas gc")
  end
end
local finished -- copas.finished

local function call_handler(h, msg, co, skt)
  local ok, e = pcall(h, msg, co, skt)
  if not ok then print("Failed executing error handler: " .. tostring(e)) end
end

local close_socket -- forward

-- The end of a thread, however it ended (returned, raised, removed).
local function finish(rec, removed)
  if rec.done then return end
  rec.done = true
  live[rec] = nil
  if not rec.foreign then alive = alive - 1 end
  if rec.sleeping == "forever" and not rec.foreign then lethargic = lethargic - 1 end
  rec.sleeping = nil
  local skt = rec.skt
  if skt and not removed then
    rec.skt = nil
    client_of[skt] = nil
    autoclose_of[skt] = nil
    close_socket(skt)
  end
  rec.errh = nil
  if not rec.foreign then gc_settle(finished()) end
  if rec.co then REC[rec.co] = nil end
  local tok = token_of[rec]
  if tok then
    REC[tok] = nil
    -- The token ends with the thread (coroutine.status says "dead"); a
    -- removed thread's stays suspended, as copas's coroutine does.
    if not removed then co_resume(tok) end
  end
end

-- Runs fn(...) in the thread; an error goes to the thread's error handler
-- while the stack is still there (its traceback shows where it was raised).
local run_protected
if compat.puc51 then
  -- PUC 5.1 cannot yield across xpcall: fn runs in a coroutine of its own
  -- whose yields are passed on (the coxpcall way).
  local function pass(rec, inner, ok, ...)
    if not ok then
      call_handler(rec.errh or _deferror, (...), inner, rec.skt)
      return
    end
    if co_status(inner) == "dead" then return end
    return pass(rec, inner, co_resume(inner, yield(...)))
  end
  run_protected = function(rec, fn, ...)
    local inner = co_create(fn)
    REC[inner] = rec
    pass(rec, inner, co_resume(inner, ...))
    REC[inner] = nil
  end
else
  run_protected = function(rec, fn, ...)
    xpcall(fn, function(msg)
      call_handler(rec.errh or _deferror, msg, rec.co, rec.skt)
    end, ...)
  end
end

local function thread_main(rec, fn, ...)
  local co = co_running()
  rec.co = co
  REC[co] = rec
  if not rec.done then run_protected(rec, fn, ...) end
  finish(rec)
end

-- Starts a thread: a cosock task, first run in the loop's next pass.
local function start(rec, fn, ...)
  alive = alive + 1
  live[rec] = true
  local n = select("#", ...)
  if n == 0 then
    rec.handle = spawn(function() return thread_main(rec, fn) end, rec.name)
  elseif n == 1 then
    local a = ...
    rec.handle = spawn(function() return thread_main(rec, fn, a) end, rec.name)
  else
    local args = compat.pack(...)
    rec.handle = spawn(function() return thread_main(rec, fn, unpack(args, 1, args.n)) end, rec.name)
  end
  return rec
end

local function token() end

function copas.addnamedthread(name, handler, ...)
  if type(name) == "function" and type(handler) == "string" then
    name, handler = handler, name -- the old argument order
  end
  local rec = { name = name, added = true }
  local tok = co_create(token)
  token_of[rec] = tok
  REC[tok] = rec
  if name then names[tok] = name end
  start(rec, handler, ...)
  return tok
end

function copas.addthread(handler, ...)
  return copas.addnamedthread(nil, handler, ...)
end

function copas.removethread(thread)
  local rec = thread and REC[thread]
  if not rec or not rec.added or rec.done then return end
  local h = rec.handle
  if rec.co == running_co() then
    -- From itself: it runs on until its next wait, then is dropped.
    spawn(function()
      if not rec.done then
        h:cancel()
        finish(rec, true)
      end
    end, "copas.removethread")
  else
    h:cancel()
    finish(rec, true)
  end
end

---------------------------------------------------------------------------
-- Sleeping and waking
---------------------------------------------------------------------------

local function wakeup_channel(rec)
  local rx = rec.rx
  if rx == nil then
    rec.tx, rx = channel.new()
    rec.rx = rx
  end
  return rx
end

local function sleep_timed(t)
  local rec = me()
  local rx = wakeup_channel(rec)
  rec.sleeping = "timed"
  rx:settimeout(t)
  local ok = rx:receive()
  rec.sleeping = nil
  if rec.woken then
    rec.woken = nil
    -- a wakeup sent as the timeout came: take it, so the next sleep waits
    if not ok then rx:settimeout(0); rx:receive() end
  end
end

local function sleep_forever()
  local rec = me()
  local rx = wakeup_channel(rec)
  rec.sleeping = "forever"
  if not rec.foreign then
    lethargic = lethargic + 1
    if finished() then gc_settle(true) end
  end
  rx:settimeout(nil)
  rx:receive()
  rec.woken = nil
end

--- sleep(t): t > 0 seconds; t < 0 until wakeup; 0 or nil: the next pass.
function copas.sleep(sleeptime)
  sleeptime = sleeptime or 0
  if sleeptime < 0 then
    sleep_forever()
  elseif sleeptime > 0 then
    sleep_timed(sleeptime)
  else
    yield(nil, nil, 0)
  end
end

--- pause(t) -> seconds slept: t > 0 seconds, otherwise the next pass.
function copas.pause(sleeptime)
  local s = gettime()
  if sleeptime and sleeptime > 0 then
    sleep_timed(sleeptime)
  else
    yield(nil, nil, 0)
  end
  return gettime() - s
end

function copas.pauseforever()
  local s = gettime()
  sleep_forever()
  return gettime() - s
end

--- wakeup(co): ends the sleep of a sleeping thread (timed or not); does
--- nothing to a thread that is not sleeping.
function copas.wakeup(co)
  local rec = co and REC[co]
  if rec == nil then return end
  local s = rec.sleeping
  if s == nil then return end
  rec.sleeping = nil
  if s == "forever" and not rec.foreign then lethargic = lethargic - 1 end
  rec.woken = true
  rec.tx:send(true)
end

---------------------------------------------------------------------------
-- copas.timeout: a callback for the running thread after a delay
---------------------------------------------------------------------------

local timer_names = weak()

local function timeout_fired(rec, h)
  if rec.tmo == h then rec.tmo = nil end
  ntimeouts = ntimeouts - 1
  internal = internal - 1
end

function copas.timeout(delay, callback)
  local rec = me()
  local h = rec.tmo
  if h then
    rec.tmo = nil
    h:cancel()
    ntimeouts = ntimeouts - 1
    internal = internal - 1
  end
  if delay > 0 and delay ~= huge then
    local co = rec.co
    local self
    self = spawn(function()
      timer_names[co_running()] = true
      yield(nil, nil, delay)
      timeout_fired(rec, self)
      xpcall(function() return callback(co) end,
             function(msg) call_handler(_deferror, msg, (co_running())) end)
    end, "copas_core_timer")
    rec.tmo = self
    ntimeouts = ntimeouts + 1
    internal = internal + 1
  elseif delay ~= 0 and delay ~= huge then
    error("timout value must be greater than or equal to 0, got: " .. tostring(delay))
  end
  return true
end

function copas.gettimeouts()
  return ntimeouts
end

---------------------------------------------------------------------------
-- Sockets
---------------------------------------------------------------------------

-- What a socket is: "tcp", "ssl" (LuaSec) or nil (udp), by its tostring.
local KIND = { tcp = "tcp", SSL = "ssl" }
local function kind_of(skt)
  return KIND[tostring(skt):sub(1, 3)]
end

-- Whether obj is a copas.wrap object (set below, with their metatables).
local is_wrapped

-- The loop's wrapper of a socket: { inner_sock = skt } with a metatable the
-- loop knows (it parks a task on it without Lua calls). total (set before
-- each call) is the call's timeout.
-- (Lua 5.1 and LuaJIT have no ephemerons: there a wrapper, which holds its
-- socket, would keep a weak key alive for ever. The wrapper is weak too; a
-- call in progress holds it, and the next call makes another.)
local W = weak(_VERSION == "Lua 5.1" and "kv" or "k")
-- (One metatable for every copy of this module: the loop knows at most 8.)
local wrapper_mt = rawget(wrap, "_copas_mt")
if not wrapper_mt then
  wrapper_mt = wrap.native({ __index = { setwaker = wrap.setwaker, _wake = wrap._wake } })
  rawset(wrap, "_copas_mt", wrapper_mt)
end

local function wrapper_of(skt)
  local w = W[skt]
  if w == nil then
    -- (anything with a send/receive is accepted, as copas accepts it)
    if skt.settimeout then skt:settimeout(0) end
    w = setmetatable({ inner_sock = skt }, wrapper_mt)
    local k = kind_of(skt)
    if k == "ssl" then w._wouldblock = "wantread" end
    if k == nil then w._udp = true end
    W[skt] = w
  end
  return w
end

-- copas's timeouts: nil is none, a number >= 0 (0 is none too, except that a
-- wrapped socket's receive then returns what it has). Weak, by socket.
local tconnect, tsend, treceive = weak(), weak(), weak()

local function total(t)
  if t == 0 then return nil end
  return t
end

local TIMEOUT_ERR = { timeout = true, wantread = true, wantwrite = true }

local function timeout_error(err)
  local rec = REC[running_co()]
  if rec and rec.ste then return err end
  return "timeout"
end

-- Fairness: a thread that reads or writes without ever waiting would keep
-- the others from running; every few calls it gives them a pass.
local function fair()
  calls = calls + 1
  if calls >= next_fair then
    next_fair = calls + FAIR_EVERY
    yield(nil, nil, 0)
  end
end

-- Wakes the tasks waiting on the wrapper (it is being closed).
local function wake_waiters(w)
  for _, kind in ipairs({ "recvr", "sendr" }) do
    if not wake_native(w, kind) then
      local f = w[kind == "recvr" and "_recvr_waker" or "_sendr_waker"]
      if f then
        w[kind == "recvr" and "_recvr_waker" or "_sendr_waker"] = nil
        f()
      end
    end
  end
end

function close_socket(skt, ...)
  local w = W[skt]
  if w then
    W[skt] = nil
    wake_waiters(w)
    -- (a socket the program closed itself may have lost its number to a new
    -- one: the loop must not drop that one from the poller)
    local getfd = skt.getfd
    if not getfd or getfd(skt) >= 0 then closing(w) end
  end
  return skt:close(...)
end

--- close(skt): closes it; a thread waiting on it returns "closed" at once.
function copas.close(skt, ...)
  return close_socket(skt, ...)
end

function copas.settimeouts(skt, connect, send, read)
  if connect ~= nil and type(connect) ~= "number" then
    return nil, "connect timeout must be 'nil' or a number"
  end
  if connect then tconnect[skt] = connect >= 0 and connect or nil end
  if send ~= nil and type(send) ~= "number" then
    return nil, "send timeout must be 'nil' or a number"
  end
  if send then tsend[skt] = send >= 0 and send or nil end
  if read ~= nil and type(read) ~= "number" then
    return nil, "read timeout must be 'nil' or a number"
  end
  if read then treceive[skt] = read >= 0 and read or nil end
  return true
end

function copas.settimeout(skt, timeout)
  timeout = timeout or -1
  if type(timeout) ~= "number" then
    return nil, "timeout must be 'nil' or a number"
  end
  return copas.settimeouts(skt, timeout, timeout, timeout)
end

-- One UDP call (receive, receivefrom) that waits for readability.
local function udp_read(client, method, arg)
  local w = W[client] or wrapper_of(client)
  w.total = total(treceive[client])
  local deadline, timed_out
  while true do
    local s, err, extra = client[method](client, arg)
    if s then return s, err, extra end
    if err ~= "timeout" then return s, err, extra end
    if timed_out then return nil, timeout_error(err), extra end
    deadline = wait(w, "recvr", deadline)
    if deadline == nil then timed_out = true end
  end
end

--- receive(client, pattern, part): LuaSocket's receive, waiting in the loop.
function copas.receive(client, pattern, part)
  local w = W[client]
  if w == nil then
    if is_wrapped(client) then return client:receive(pattern, part) end
    w = wrapper_of(client)
  end
  if w._udp then return udp_read(client, "receive", pattern) end
  local t = treceive[client]
  if t == 0 then t = nil end
  w.total = t
  calls = calls + 1
  if calls >= next_fair then next_fair = calls + FAIR_EVERY; yield(nil, nil, 0) end -- (fair, inline)
  local s, err, p = receive_c(w, pattern or "*l", part)
  if s == nil and TIMEOUT_ERR[err] then return nil, timeout_error(err), p end
  return s, err, p
end

--- receivefrom(client, size): UDP only.
function copas.receivefrom(client, size)
  return udp_read(client, "receivefrom", size or UDP_DATAGRAM_MAX)
end

--- receivepartial(client, pattern, part): returns as soon as some data came.
function copas.receivepartial(client, pattern, part)
  pattern = pattern or "*l"
  if is_wrapped(client) then return client:receivepartial(pattern, part) end
  local w = W[client] or wrapper_of(client)
  w.total = total(treceive[client])
  local orig = #(part or "")
  local deadline, timed_out, s, err
  fair()
  while true do
    s, err, part = client:receive(pattern, part)
    if s or (type(part) == "string" and #part > orig) or not TIMEOUT_ERR[err] then
      return s, err, part
    end
    if timed_out then return nil, timeout_error(err), part end
    deadline = wait(w, err == "wantwrite" and "sendr" or "recvr", deadline)
    if deadline == nil then timed_out = true end
  end
end
copas.receivePartial = copas.receivepartial

--- send(client, data, from, to): LuaSocket's send, waiting in the loop.
function copas.send(client, data, from, to)
  local w = W[client]
  if w == nil then
    if is_wrapped(client) then return client:send(data, from, to) end
    w = wrapper_of(client)
  end
  if w._udp then -- (udp does not wait to send; nor does an object that is no socket)
    fair()
    return client:send(data)
  end
  local t = tsend[client]
  if t == 0 then t = nil end
  w.total = t
  calls = calls + 1
  if calls >= next_fair then next_fair = calls + FAIR_EVERY; yield(nil, nil, 0) end
  local s, err, last = send_c(w, data, from or 1, to)
  if s == nil and TIMEOUT_ERR[err] then return nil, timeout_error(err), last end
  return s, err, last
end

function copas.sendto(client, data, ip, port)
  return client:sendto(data, ip, port)
end

local CONNECTING = { timeout = true, ["Operation already in progress"] = true }

--- connect(skt, host, port): waits until the connection is made.
function copas.connect(skt, host, port)
  local w = wrapper_of(skt)
  w.total = total(tconnect[skt])
  local deadline, timed_out, tried
  while true do
    local ret, err = skt:connect(host, port)
    if ret or not CONNECTING[err] then
      if not ret and err == "already connected" and tried then return 1 end
      return ret, err
    end
    if timed_out then return nil, timeout_error(err) end
    tried = true
    deadline = wait(w, "sendr", deadline)
    if deadline == nil then timed_out = true end
  end
end

function copas.flush() end

-- copas's tests (with _G._TEST set) look into its per-coroutine timeout
-- registers; here a call's timeout lives in the call, so they stay empty.
if rawget(_G, "_TEST") then
  copas._socket_register, copas._operation_register, copas._timeout_flags = weak(), weak(), weak()
end

---------------------------------------------------------------------------
-- TLS
---------------------------------------------------------------------------

local ssl -- LuaSec, loaded when first needed

local function ssl_wrap(skt, params)
  if kind_of(skt) == "ssl" then return skt end
  if not params then
    error("cannot wrap socket into a secure socket (using 'ssl.wrap()') without parameters/context")
  end
  ssl = ssl or require("ssl")
  local nskt = assert(ssl.wrap(skt, params))
  nskt:settimeout(0)
  copas.settimeouts(nskt, tconnect[skt] or -1, tsend[skt] or -1, treceive[skt] or -1)
  local rec = autoclose_of[skt]
  if rec then
    autoclose_of[skt] = nil
    autoclose_of[nskt] = rec
    rec.skt = nskt
  end
  if names[skt] then names[nskt] = names[skt] end
  -- the same descriptor: the loop's wrapper goes on, on the TLS object
  local w = W[skt]
  if w then
    W[skt] = nil
    w.inner_sock = nskt
    w._wouldblock = "wantread"
    W[nskt] = w
  end
  return nskt
end

local strict_mt = { __index = function(_, key)
  error("accessing unknown 'ssl_params' table key: " .. tostring(key))
end }
local NO_SSL = setmetatable({ wrap = false, sni = false }, strict_mt) -- (shared: read only)

local function normalize_sslt(sslt)
  local t = type(sslt)
  if t == "nil" then return NO_SSL end
  local r = setmetatable({}, strict_mt)
  if t == "table" then
    if sslt.mode or sslt.protocol then
      r.wrap, r.sni = sslt, false
    else
      r.wrap, r.sni = sslt.wrap or false, sslt.sni or false
    end
  elseif t == "userdata" then
    r.wrap, r.sni = sslt, false
  else
    error("ssl parameters; did not expect type " .. tostring(sslt))
  end
  return r
end

--- dohandshake(skt, params) -> the TLS socket (raises when the handshake fails).
function copas.dohandshake(skt, wrap_params)
  local nskt = ssl_wrap(skt, wrap_params)
  local w = wrapper_of(nskt)
  w.total = total(tconnect[nskt])
  local deadline, timed_out
  while true do
    local ok, err = nskt:dohandshake()
    if ok then return nskt end
    if not TIMEOUT_ERR[err] then error("TLS/SSL handshake failed: " .. tostring(err)) end
    if timed_out then return nil, timeout_error(err) end
    deadline = wait(w, err == "wantwrite" and "sendr" or "recvr", deadline)
    if deadline == nil then timed_out = true end
  end
end

---------------------------------------------------------------------------
-- Wrapped sockets (copas.wrap)
---------------------------------------------------------------------------

local tcp_methods, udp_methods = {}, {}
local tcp_mt = { __index = tcp_methods }
local udp_mt = { __index = udp_methods }
local function wrapped_tostring(self) return tostring(self.socket) .. " (copas wrapped)" end
tcp_mt.__tostring, udp_mt.__tostring = wrapped_tostring, wrapped_tostring

local c_send, c_receive = copas.send, copas.receive
function tcp_methods:send(data, from, to) return c_send(self.socket, data, from, to) end
function tcp_methods:receive(pattern, prefix)
  local skt = self.socket
  if treceive[skt] == 0 then return copas.receivepartial(skt, pattern, prefix) end
  return c_receive(skt, pattern, prefix)
end
function tcp_methods:receivepartial(pattern, prefix)
  return copas.receivepartial(self.socket, pattern, prefix)
end
function tcp_methods:flush() end
function tcp_methods:settimeout(t) return copas.settimeout(self.socket, t) end
function tcp_methods:settimeouts(c, s, r) return copas.settimeouts(self.socket, c, s, r) end
function tcp_methods:connect(...)
  local res, err = copas.connect(self.socket, ...)
  if res then
    if self.ssl_params.sni then self:sni() end
    if self.ssl_params.wrap then res, err = self:dohandshake() end
  end
  return res, err
end
function tcp_methods:close(...) return copas.close(self.socket, ...) end

-- Calls that LuaSec's objects may lack: nil, msg then.
local function guarded(name, msg)
  return function(self, ...)
    local inner = self.socket
    local r = { pcall(inner[name], inner, ...) }
    if r[1] then return unpack(r, 2, 4) end
    return nil, msg
  end
end
for _, n in ipairs({ "getsockname", "getpeername", "setoption", "getoption" }) do
  tcp_methods[n] = guarded(n, "not implemented by LuaSec")
end
for _, n in ipairs({ "getalpn", "getsniname" }) do
  tcp_methods[n] = guarded(n, "not a tls socket")
end
for _, n in ipairs({ "bind", "getstats", "setstats", "listen", "accept", "shutdown", "getfd", "dirty" }) do
  tcp_methods[n] = function(self, ...)
    local inner = self.socket
    return inner[n](inner, ...)
  end
end
function tcp_methods:sni(names_, strict)
  local sslp = self.ssl_params
  self.socket = ssl_wrap(self.socket, sslp.wrap)
  if names_ == nil then
    names_, strict = sslp.sni.names, sslp.sni.strict
  end
  return self.socket:sni(names_, strict)
end
function tcp_methods:dohandshake(wrap_params)
  local nskt, err = copas.dohandshake(self.socket, wrap_params or self.ssl_params.wrap)
  if not nskt then return nskt, err end
  self.socket = nskt
  return self
end

for k, v in pairs(tcp_methods) do udp_methods[k] = v end
function udp_methods:send(...) return self.socket:send(...) end
function udp_methods:sendto(...) return self.socket:sendto(...) end
function udp_methods:receive(size) return copas.receive(self.socket, size or UDP_DATAGRAM_MAX) end
function udp_methods:receivefrom(size) return copas.receivefrom(self.socket, size or UDP_DATAGRAM_MAX) end
function udp_methods:setpeername(...) return self.socket:setpeername(...) end
function udp_methods:setsockname(...) return self.socket:setsockname(...) end
-- copas does not close a wrapped udp socket: it is also the server's
function udp_methods:close() return true end

--- wrap(skt, sslt): a copas socket object for skt (itself when it is one).
function copas.wrap(skt, sslt)
  local mt = getmetatable(skt)
  if mt == tcp_mt or mt == udp_mt then return skt end
  skt:settimeout(0)
  if kind_of(skt) then
    return setmetatable({ socket = skt, ssl_params = normalize_sslt(sslt) }, tcp_mt)
  end
  return setmetatable({ socket = skt }, udp_mt)
end

function is_wrapped(obj)
  local mt = getmetatable(obj)
  return mt == tcp_mt or mt == udp_mt
end

local function realsocket(skt)
  local mt = getmetatable(skt)
  if mt == tcp_mt or mt == udp_mt then return skt.socket end
  return skt
end

--- handler(fn, sslparams): a server handler that wraps its socket (and does
--- the TLS handshake) before calling fn.
function copas.handler(handler, sslparams)
  return function(skt, ...)
    skt = copas.wrap(skt, sslparams)
    local sslp = skt.ssl_params
    if sslp.sni then skt:sni(sslp.sni.names, sslp.sni.strict) end
    if sslp.wrap then skt:dohandshake(sslp.wrap) end
    return handler(skt, ...)
  end
end

---------------------------------------------------------------------------
-- Servers
---------------------------------------------------------------------------

local servers = {} -- server socket -> its accept task's handle

local function socket_name(skt)
  local n = names[skt]
  if n then return n end
  local rec = client_of[skt]
  if rec then return socket_name(rec.server) .. ":client_" .. rec.n end
  return tostring(skt)
end

local function accept_loop(server, handler)
  local w = wrapper_of(server)
  w.total = nil
  local count = 0
  while true do
    local client, err = server:accept()
    if client then
      count = count + 1
      client:settimeout(0)
      local c, s, r = tconnect[server], tsend[server], treceive[server]
      if c then tconnect[client] = c end
      if s then tsend[client] = s end
      if r then treceive[client] = r end
      local rec = { server = server, n = count }
      client_of[client] = rec
      if copas.autoclose then
        rec.skt = client
        autoclose_of[client] = rec
      end
      start(rec, handler, client)
    elseif err == "timeout" then
      wait(w, "recvr", nil)
    else
      servers[server] = nil
      nservers = nservers - 1
      internal = internal - 1
      return
    end
  end
end

function copas.addserver(server, handler, timeout, name)
  server:settimeout(0)
  if name then names[server] = name end
  if timeout then copas.settimeout(server, timeout) end
  if kind_of(server) then
    if servers[server] then return end
    nservers = nservers + 1
    internal = internal + 1
    servers[server] = spawn(function() return accept_loop(server, handler) end, "copas server")
  else
    local rec = { name = socket_name(server) .. ":handler" }
    start(rec, handler, server)
  end
end

function copas.removeserver(server, keep_open)
  local skt = realsocket(server)
  local h = servers[skt]
  if h then
    servers[skt] = nil
    nservers = nservers - 1
    internal = internal - 1
    h:cancel()
    if finished() then gc_settle(true) end
  end
  if keep_open then return true end
  if skt ~= server then return server:close() end
  return close_socket(skt)
end

---------------------------------------------------------------------------
-- Error handlers
---------------------------------------------------------------------------

local function thread_name(co)
  local n = names[co]
  if n then return n end
  if timer_names[co] then return "copas_core_timer" end
  local rec = REC[co]
  if rec then
    if rec.name then return rec.name end
    if rec.server then return socket_name(rec.server) .. ":handler_" .. rec.n end
  end
  return tostring(co)
end

function copas.gettraceback(msg, co, skt)
  local co_str = co == nil and "nil" or thread_name(co)
  local skt_str = skt == nil and "nil" or socket_name(skt)
  local msg_str = msg == nil and "" or tostring(msg)
  if msg_str == "" then
    msg_str = ("(coroutine: %s, socket: %s)"):format(co_str, skt_str)
  else
    msg_str = ("%s (coroutine: %s, socket: %s)"):format(msg_str, co_str, skt_str)
  end
  if type(co) == "thread" then return debug.traceback(co, msg_str) end
  return debug.traceback(msg_str, 2)
end

_deferror = function(msg, co, skt)
  print(copas.gettraceback(msg, co, skt))
end

function copas.seterrorhandler(err, default)
  assert(err == nil or type(err) == "function", "Expected the handler to be a function, or nil")
  if default then
    assert(err ~= nil, "Expected the handler to be a function when setting the default")
    _deferror = err
  else
    me().errh = err
  end
end
copas.setErrorHandler = copas.seterrorhandler

function copas.geterrorhandler(co)
  local rec = REC[co or running_co()]
  return rec and rec.errh or _deferror
end

function copas.useSocketTimeoutErrors(bool)
  me().ste = not not bool
end

---------------------------------------------------------------------------
-- Names
---------------------------------------------------------------------------

function copas.setsocketname(name, skt)
  assert(type(name) == "string", "expected arg #1 to be a string")
  skt = assert(realsocket(skt), "expected arg #2 to be a socket")
  names[skt] = name
end

function copas.getsocketname(skt)
  skt = assert(realsocket(skt), "expected arg #1 to be a socket")
  return socket_name(skt)
end

function copas.setthreadname(name, coro)
  assert(type(name) == "string", "expected arg #1 to be a string")
  coro = coro or running_co()
  assert(type(coro) == "thread", "expected arg #2 to be a coroutine or nil")
  names[coro] = name
  local rec = REC[coro]
  if rec then
    rec.name = name
    if rec.co then names[rec.co] = name end
    local tok = token_of[rec]
    if tok then names[tok] = name end
  end
end

function copas.getthreadname(coro)
  coro = coro or running_co()
  assert(type(coro) == "thread", "expected arg #1 to be a coroutine or nil")
  return thread_name(coro)
end

---------------------------------------------------------------------------
-- The loop
---------------------------------------------------------------------------

--- finished() -> true when no copas thread can go on: none ready, waiting on
--- a socket or sleeping with a time, no server, and the threads asleep
--- without a time have no copas.timeout to wake them.
function finished()
  return alive == lethargic and nservers == 0 and (lethargic == 0 or ntimeouts == 0)
end
copas.finished = finished

-- Tasks on the loop that are not this module's (a cosock program's own).
local function others()
  return core.stats().tasks - alive - internal
end

local YIELD_MSG = "coroutine.yield was called without a resume first, user-code cannot yield to Copas"

-- Nothing could wake a task: threads that yielded by themselves (not to a
-- copas call) are ended with copas's error. Returns whether there were any.
local function end_bare_yields()
  local found = false
  for _, st in ipairs(core.thread_states()) do
    local rec = REC[st.co]
    if rec and not rec.foreign and not rec.done and rec.sleeping == nil and #st.waits == 0 then
      found = true
      call_handler(rec.errh or _deferror, YIELD_MSG, st.co, rec.skt)
      rec.handle:cancel()
      finish(rec)
    end
  end
  return found
end

-- The loop's stall (every task waits on something nothing can wake) is, in
-- a copas program, often the end of its work: while copas runs the loop the
-- stall hook only notes it; the state dump is printed when the stall is an
-- error after all.
local alwaysprint = print
local stall_seen = false
local function quiet_hook() stall_seen = true end
local function loud_hook() require("cosock.dump")(alwaysprint) end
local in_loop = false

-- (core.step, not cosock.step: one protected call less per pass; an error
-- that is not the stall goes through cosock.step's wording below)
local core_step = core.step
-- No task is left on the loop at all (cosock.stop() or a handle:cancel()
-- took copas's threads away behind its back): forget them.
local function forget_all()
  for rec in pairs(live) do finish(rec, true) end
  for skt in pairs(servers) do servers[skt] = nil end
  alive, lethargic, nservers, ntimeouts, internal, gc_task = 0, 0, 0, 0, 0, nil
end

-- Returns whether anything is left, and whether the pass's poll gave back
-- a descriptor (copas.step's answer).
local function step_once(timeout)
  stall_seen = false
  local ok, err, polled = pcall(core_step, timeout)
  if ok then
    if err == false then forget_all(); return false, false end
    return true, polled > 0
  end
  if stall_seen then
    if not finished() and end_bare_yields() then return true, false end
    if finished() and others() == 0 then return false, false end
    loud_hook()
    err = err .. require("cosock.deadlock").stall()
  end
  if type(err) == "string" and (err:find("\nstack traceback:\n", 1, true) or err:find("^stack traceback:\n")
      or err:find("^cosock: ") or err:find("^cosock tried to call socket%.select")) then
    error(err, 1) -- (with this file's position, as cosock.run gives cosock.lua's)
  end
  error(err, 0)
end

--- step(timeout): one pass of the loop: runs the threads that are ready,
--- then waits at most timeout seconds (default: until something happens).
--- Returns, as copas, true when the wait gave back a socket to handle and
--- false when it did not (it timed out, or nothing is left that could run).
function copas.step(timeout)
  timeout = timeout or huge
  if in_loop then return (select(2, step_once(timeout))) end
  core.set_stall_hook(quiet_hook)
  local ok, err, handled = pcall(step_once, timeout)
  core.set_stall_hook(loud_hook)
  if not ok then error(err, 0) end
  return handled
end

local exit_sema, exiting

local function resetexit()
  exit_sema = copas.semaphore.new(1, 0, huge)
  exiting = false
end

function copas.exit()
  if exiting then return end
  exiting = true
  exit_sema:destroy()
end

function copas.exiting()
  return exiting
end

function copas.waitforexit()
  exit_sema:take(1)
end

function copas.loop(initializer, timeout)
  if type(initializer) == "function" then
    copas.addnamedthread("copas_initializer", initializer)
  else
    timeout = initializer or timeout
  end
  resetexit()
  copas.running = true
  core.set_stall_hook(quiet_hook)
  in_loop = true
  local ok, err = pcall(function()
    timeout = timeout or huge
    while true do
      if copas.finished() then
        if not exiting then
          copas.exit()
        elseif others() == 0 then
          break
        end
      end
      if not step_once(timeout) and exiting then break end
    end
  end)
  in_loop = false
  core.set_stall_hook(loud_hook)
  copas.running = false
  if not ok then error(err, 0) end
end

--- cancelall(): drops every thread, server and timeout, then exits (for
--- tests' teardown).
function copas.cancelall()
  local me_co = running_co()
  for rec in pairs(live) do
    if rec.co ~= me_co then
      rec.handle:cancel()
      local h = rec.tmo
      if h then h:cancel(); rec.tmo = nil; ntimeouts = ntimeouts - 1; internal = internal - 1 end
      finish(rec)
    end
  end
  for skt in pairs(servers) do copas.removeserver(skt) end
  copas.exit()
end

function copas.status()
  return {
    running = not not copas.running, timeout = ntimeouts, timer = alive - lethargic,
    inactive = lethargic, read = nservers, write = 0, active = 0,
  }
end

---------------------------------------------------------------------------
-- Debug (copas.debug): accepted, prints nothing
---------------------------------------------------------------------------

copas.debug = {
  start = function() end,
  stop = function() end,
  socket = function(skt) return skt end,
}

---------------------------------------------------------------------------
-- socket.try / newtry / protect a thread may wait inside (as copas does)
---------------------------------------------------------------------------

if socket then
  local ypcall = compat.pcall
  local err_mt = { __tostring = function(self)
    return "Copas 'try' error intermediate table: '" .. tostring(self[1]) .. "'"
  end }
  local function status(ok, ...)
    if ok then return ... end
    local e = ...
    if type(e) == "table" and getmetatable(e) == err_mt then return nil, e[1] end
    error(e, 0)
  end
  function socket.protect(func)
    return function(...) return status(ypcall(func, ...)) end
  end
  function socket.newtry(finalizer)
    return function(...)
      if not (...) then
        pcall(finalizer or function() end, select(2, ...))
        error(setmetatable({ (select(2, ...)) }, err_mt), 0)
      end
      return ...
    end
  end
  socket.try = socket.newtry()
end

---------------------------------------------------------------------------
-- The submodules load when first read; install() makes this `copas`.
---------------------------------------------------------------------------

local SUB = { ftp = true, future = true, http = true, lock = true, queue = true,
              semaphore = true, smtp = true, timer = true }

-- A fresh copy of this module and its submodules: what `require "copas"`
-- gives once package.loaded.copas was cleared (copas's tests reload copas
-- to start from a clean state).
local function fresh()
  package.loaded["cosock.copas"] = nil
  for k in pairs(SUB) do package.loaded["cosock.copas." .. k] = nil end
  package.loaded["cosock.copas.luasocket"] = nil
  return require("cosock.copas")
end

--- install() -> this module: from now on `require "copas"` (and
--- "copas.lock", ...) gives cosock-native's copas; a require after
--- package.loaded.copas was cleared gives a fresh copy, as copas's own does.
function copas.install()
  package.loaded.copas = copas
  package.preload.copas = function() return fresh().install() end
  for k in pairs(SUB) do
    package.loaded["copas." .. k] = nil
    package.preload["copas." .. k] = function() return require("copas")[k] end
  end
  return copas
end

return setmetatable(copas, {
  __index = function(self, key)
    if SUB[key] then
      local m = require("cosock.copas." .. key)
      rawset(self, key, m)
      return m
    end
  end,
  __call = function(self, ...) return self.loop(...) end,
})
