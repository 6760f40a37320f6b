--- cosock.socket.wrap: what the tcp, udp and tls wrappers share: their receive,
--- send and wait (C, from cosock.core), the waker protocol, close, settimeout,
--- and the builders of their method tables.
---
--- A wrapper is a plain table { inner_sock = <LuaSocket/LuaSec object>, class = "...",
--- timeout = nil|number, total = nil|number } whose metatable's __index is its
--- method table. The inner object is always non-blocking (settimeout(0)); a call
--- that would block waits until the socket is ready (or the wrapper's timeout
--- passes), then retries. receive, send and that wait are written in C
--- (src/features/wrapper.c, exported by cosock.core): they run on every call of every
--- connection. In the task's own coroutine the loop parks the task directly;
--- elsewhere the wait yields `{self}` in recvt or sendt, as cosock's wrappers do.
---
--- Timeouts are LuaSocket's (see settimeout and M.wait below): by default the
--- timeout limits each wait ("b"), as in LuaSocket and cosock 0.2.0; a "t" timeout
--- limits the whole call. A call that times out returns the inner object's own
--- failure values ("timeout" for LuaSocket, "wantread"/"wantwrite" for LuaSec).
---
--- Private fields a wrapper may carry (created lazily, never per call):
---   _recvt, _sendt          the `{self}` wait tables, reused by every wait
---   _recvr_waker, _sendr_waker  the wakers the loop gave (waker protocol)
---   _closed                 true after close() (with cosock.set_close_wakes(true)
---                           a later setwaker is then called at once)
--- (The loop also caches the inner socket's fd in the wrapper, under a negative
--- integer key only src/loop/waiters.c uses; close and setfd ask it to forget it.)
---   _wouldblock             the error the inner receive gives when it would block,
---                           when it is not LuaSocket's "timeout" (tls: "wantread")
--- src/features/wrapper.c reads every field raw (never through the method table).

local type, tonumber, error, tostring = type, tonumber, error, tostring

local M = {}

-- The loop's C core: receive, send and wait (src/features/wrapper.c), and its fast
-- path for our own wrappers (see M.methods and M.close).
local core = require "cosock.core"
core.open "socket" -- (its C functions: added to cosock.core on first use)
local closing, forget_fd, close_wakes = core.closing, core.forget_fd, core.close_wakes
local luasocket_timeouts = core.luasocket_timeouts
local wake_native = core.wake

local WAKER_FIELD = { recvr = "_recvr_waker", sendr = "_sendr_waker" }

--- wait(self, kind, deadline) -> deadline | nil: wait until `self` is ready for
--- `kind` ("recvr" or "sendr") or a timeout, as LuaSocket times its calls:
--- self.timeout (mode "b") limits each wait, self.total (mode "t") the whole
--- call; nil means no limit, 0 or negative fails at once. `deadline` is nil on
--- the first wait of a call and the value the previous wait returned afterwards.
--- nil back means the call must fail with a timeout. (C: src/features/wrapper.c.)
M.wait = core.wait

---------------------------------------------------------------------------
-- Methods shared by every wrapper kind
---------------------------------------------------------------------------

--- settimeout(t [, mode]): cosock's timeouts: t limits each wait of a call
--- (LuaSocket's "b"), whatever the mode, as cosock 0.2.0 ignores it. With
--- cosock.set_luasocket_timeouts(true) the mode is read as LuaSocket reads it, by
--- the first letter: "t" or "r" ("total", "return") limits the whole call; "b"
--- (the default; "block") each wait, and so does any other mode (LuaSocket would
--- raise). nil: no limit; 0 or negative: the call fails with the inner object's
--- values after one yield (at once with set_luasocket_timeouts(true)); negative
--- is cosock's quirk, which LuaSocket reads as no limit. Returns 1.0 (tls
--- wrappers: nothing).
function M.settimeout(self, t, mode)
  if t ~= nil then
    local n = tonumber(t)
    if n == nil then
      error("bad argument #1 to 'settimeout' (number expected, got " .. type(t) .. ")", 2)
    end
    t = n
  end
  local m = type(mode) == "string" and mode:sub(1, 1)
  if (m == "t" or m == "r") and luasocket_timeouts() then
    self.total = t
  else
    self.timeout = t
  end
  return 1.0
end

--- setwaker(kind, fn): the waker protocol. The loop sets a waker before parking a
--- task on this object and clears it (nil) before resuming the task. Only one task
--- may wait per kind. With cosock.set_close_wakes(true) a waker set on a closed
--- wrapper is called at once (the task's retry then returns the inner object's
--- "closed"); by default it is kept, as cosock's is: LuaSocket's select never
--- reports a closed socket, so only the wait's timeout ends it.
--- Its errors carry this file's position, as cosock's (raised by assert) do.
function M.setwaker(self, kind, fn)
  local field = WAKER_FIELD[kind]
  if field == nil then
    error(core.messages.wake_kind .. tostring(kind))
  end
  if fn ~= nil and self[field] ~= nil then
    error(kind .. " waker already set, sockets can only block one thread per waker kind")
  end
  self[field] = fn
  if fn ~= nil and self._closed and close_wakes() then
    self[field] = nil
    fn()
  end
end

--- _wake(kind): called by the loop when the inner socket is ready; calls (and drops)
--- the waker of that kind. Returns true when there was one; otherwise prints
--- cosock's warning (with the global print, as cosock does) and returns false.
function M._wake(self, kind)
  local field = WAKER_FIELD[kind]
  local fn = field and self[field]
  if fn == nil then
    -- The loop parks tasks on our wrappers without handing them a waker.
    if field and wake_native(self, kind) then return true end
    print("warning attempt to wake, but no waker set")
    return false
  end
  self[field] = nil
  fn()
  return true
end

-- The end of close: wake any task blocked on the wrapper, then return what the
-- inner object's close returned, as many values as it gave.
local function closed(self, ...)
  local fn = self._recvr_waker
  if fn ~= nil then self._recvr_waker = nil; fn() end
  fn = self._sendr_waker
  if fn ~= nil then self._sendr_waker = nil; fn() end
  return ...
end

--- close(): close the inner object. Returns the inner close's values
--- (LuaSocket: 1.0; LuaSec: none). A task blocked on this wrapper is not woken,
--- as on cosock: its wait ends at its timeout (for ever without one). With
--- cosock.set_close_wakes(true) it is woken, and its retry gets the inner
--- object's own error ("closed").
function M.close(self)
  local inner = self.inner_sock
  self._closed = true
  -- The loop deals with the tasks it parked on this socket itself (without
  -- the wakers below) and forgets the fd while it is still open.
  if closing(self) then return closed(self, inner:close()) end
  return inner:close()
end

--- receive(pattern, prefix): LuaSocket's receive ("*l" default, "*a", byte count)
--- that waits instead of failing with "timeout"/"wantread"; after a send it waits
--- before its first recv() when nothing is buffered. send(data, i, j): LuaSocket's
--- send; what does not fit the socket buffer waits for writability and goes after.
--- Both in C (src/features/wrapper.c), for tcp and tls.
M.receive = core.receive
M.send = core.send

---------------------------------------------------------------------------
-- Builders, run once per method name when a module loads (never per call)
---------------------------------------------------------------------------

--- A method that calls the inner object's method of the same name.
function M.passthrough(name)
  return function(self, ...)
    local inner = self.inner_sock
    return inner[name](inner, ...)
  end
end

local function copy_class(self, inner, ok, ...)
  if ok then self.class = inner.class end
  return ok, ...
end

--- Like passthrough, and copies the inner object's class after a successful call
--- (bind, listen, setpeername, ... change it).
function M.passthrough_class(name)
  return function(self, ...)
    local inner = self.inner_sock
    return copy_class(self, inner, inner[name](inner, ...))
  end
end

--- Fills in the methods every socket wrapper shares: the waker protocol,
--- close, settimeout, setfd, and the calls that go to the inner object as they
--- are. A wrapper module then adds what is its own.
function M.common(methods)
  methods.close = M.close
  methods.settimeout = M.settimeout
  methods.setwaker = M.setwaker
  methods._wake = M._wake
  methods.setfd = M.setfd
  for _, name in ipairs({ "dirty", "getfamily", "getfd", "getoption", "setoption",
                          "getpeername", "getsockname" }) do
    methods[name] = M.passthrough(name)
  end
  return methods
end

--- maker(create, from): a function that makes a LuaSocket object with
--- create() (luasocket.tcp, tcp4, udp6, ...) and wraps it with from(inner);
--- nil, err when the system refuses. nil when there is no create (an older
--- LuaSocket without tcp6, say).
function M.maker(create, from)
  if not create then return nil end
  return function()
    local inner, err = create()
    if not inner then return nil, err end
    return from(inner)
  end
end

--- Make `methods` a callable method table: methods(...) calls ctor(...), and build
--- the metatable shared by every wrapper of that kind. The loop is told that
--- objects with this metatable are ours: it then waits on them without calling
--- setwaker/_wake (same results, no Lua calls per wait).
function M.methods(methods, ctor)
  setmetatable(methods, { __call = function(_, ...) return ctor(...) end })
  return M.native({ __index = methods })
end

--- Tells the loop that objects with metatable mt are wrappers built on this
--- module (close/_wake/setfd here, receive/send/wait in C); returns mt.
function M.native(mt)
  core.register_native(mt)
  return mt
end

--- setfd(fd): LuaSocket's setfd; the loop forgets the fd it cached.
function M.setfd(self, ...)
  local inner = self.inner_sock
  forget_fd(self)
  return copy_class(self, inner, inner:setfd(...))
end

return M
