--- cosock.ossignal: the operating system's signals (SIGTERM, SIGHUP, ...) as
--- messages for tasks. Not cosock.signal (schedlua's signals between tasks).
---
--- receiver(name, ...) -> receiver: takes the named signals ("TERM", "INT",
---   "HUP", "QUIT", "USR1", "USR2", "CHLD", "WINCH", "ALRM", "PIPE"; "SIGTERM"
---   too) from now on: they no longer do what they did (end the process, ...)
---   and each one received is a message of this receiver.
--- receiver:receive()     the name of the next signal ("TERM"), waiting for one
---                        in the loop; nil, "timeout"; nil, "closed"
--- receiver:settimeout(t) nil: no limit (default); 0: do not wait
--- receiver:close()       gives the signals back (the process mask as it was);
---                        a task waiting in receive gets nil, "closed". Also
---                        done when the receiver is collected.
--- receiver:setwaker(kind, fn), receiver:_wake(kind), receiver.inner_sock:
---                        the waker protocol of cosock's sockets, so a receiver
---                        goes in cosock.socket.select and cosock.op.readable.
---
--- A signalfd per receiver (src/features/ossignal.c): the signals are blocked before it
--- is made, so none is lost or acted on in between. doc/service.md.

local core = require "cosock.core"
local isyieldable = require("cosock.compat").isyieldable

local C = core.ossignal_open()
local closing = core.closing

local R = {}
R.__index = R

local m = {}

-- A method called with a dot (rx.receive()) or on another value.
local function check_self(self, what)
  if getmetatable(self) ~= R then
    error(("bad self to '%s' (cosock.ossignal receiver expected, got %s)"):format(what, type(self)), 3)
  end
end

-- receiver -> the task (coroutine) that made it, for cosock.tasks's leftover
-- warning (an open receiver keeps its signals blocked after its task ended).
m._owners = setmetatable({}, { __mode = "kv" })

function m._is_receiver(v) return getmetatable(v) == R end

function m.receiver(...)
  -- (protected, so that its errors name the caller's line, not this one's)
  local ok, fd = pcall(C.open, ...)
  if not ok then error(fd, 2) end
  local rx = setmetatable({ inner_sock = fd }, R)
  local co = core.current_task()
  if co then m._owners[rx] = co end
  return rx
end

function R:settimeout(t)
  check_self(self, "settimeout")
  if t ~= nil and (type(t) ~= "number" or t ~= t) then
    error("bad argument #1 to 'settimeout' (number or nil expected, got " ..
      (t ~= t and "NaN" or type(t)) .. ")", 2)
  end
  if t == math.huge then t = nil end -- (no limit)
  self._timeout = t
end

function R:receive()
  check_self(self, "receive")
  local t = self._timeout
  local deadline = t and t > 0 and core.monotime() + t
  while true do
    if self._closed then return nil, "closed" end
    local name = self.inner_sock:read()
    if name then return name end
    if t and t <= 0 then return nil, "timeout" end
    if not isyieldable() then
      error("cosock.ossignal: receive must be called from a task (or with settimeout(0))", 2)
    end
    local left = deadline and deadline - core.monotime()
    if left and left <= 0 then return nil, "timeout" end
    local tw = core.trace_wait -- (a trace's label for this wait; nil while none is on)
    if tw then tw("ossignal") end
    local _, _, err = core.yield({ self }, nil, left) -- (raises in a cancelled scope)
    if err == "timeout" and not self._closed then
      local late = self.inner_sock:read()      -- (came with the deadline)
      if late then return late end
      return nil, "timeout"
    end
  end
end

function R:setwaker(kind, fn)
  check_self(self, "setwaker")
  if kind ~= "recvr" then error(core.messages.wake_kind .. tostring(kind), 2) end
  if fn ~= nil and self._waker ~= nil then
    error("recvr waker already set, sockets can only block one thread per waker kind", 2)
  end
  self._waker = fn
  if fn ~= nil and self._closed then
    self._waker = nil
    fn()
  end
end

function R:_wake(kind)
  check_self(self, "_wake")
  local fn = kind == "recvr" and self._waker
  if not fn then return false end
  self._waker = nil
  fn()
  return true
end

function R:close()
  check_self(self, "close")
  if self._closed then return end
  self._closed = true
  closing(self)                                  -- the loop forgets the fd first
  self.inner_sock:close()
  self:_wake("recvr")
end

function R:__tostring()
  return "cosock.ossignal.receiver (fd " .. tostring(self.inner_sock:getfd()) .. ")"
end

return m
