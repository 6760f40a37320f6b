--- cosock.socket.udp: UDP wrappers whose blocking calls yield to the cosock loop.
---
--- The module is the method table shared by every udp wrapper, and is callable:
--- `udp()` returns a new wrapper of class "udp{unconnected}" (or nil, err).
--- receive/receivefrom wait for readability, send/sendto for writability; see
--- cosock.socket.wrap for the timeout rule. On a timed-out wait the calls return
--- LuaSocket's own `nil, "timeout"`. A call on a wrapper already closed gets
--- LuaSocket's own values, as in cosock (its udp object gives "" or unrelated
--- errors there); a task blocked in a call that close() woke gets nil, "closed".

local luasocket = require "socket"
local wrap = require "cosock.socket.wrap"
local resolve = require "cosock.socket.resolve"

local setmetatable = setmetatable
local wait = wrap.wait
local passthrough_class = wrap.passthrough_class
local is_name = resolve.is_name

local m = {}
local mt

local function new(inner)
  inner:settimeout(0)
  return setmetatable({ inner_sock = inner, class = inner.class }, mt)
end

mt = wrap.methods(m, wrap.maker(luasocket.udp, new))

-- Private: wrap a LuaSocket udp object (cosock.socket's udp4/udp6). Not LuaSocket API.
m._from_inner = new

-- The end of one try of inner:<name>(a, b, c) whose results are r1, ...: on
-- success returns them as they are; on "timeout" waits for `kind` and tries
-- again (a tail call); a wrapper closed during the wait fails with "closed"
-- (LuaSocket's udp gives "" or unrelated errors there).
local function settle(self, kind, name, a, b, c, deadline, r1, ...)
  if r1 then return r1, ... end
  local err = ...
  if err ~= "timeout" then return nil, err end
  deadline = wait(self, kind, deadline)
  if deadline == nil then return nil, err end
  if self._closed then return nil, "closed" end
  local inner = self.inner_sock
  return settle(self, kind, name, a, b, c, deadline, inner[name](inner, a, b, c))
end

local function retry(self, kind, name, a, b, c)
  local inner = self.inner_sock
  return settle(self, kind, name, a, b, c, nil, inner[name](inner, a, b, c))
end

--- receive([size]): one datagram, or nil, err.
function m:receive(size) return retry(self, "recvr", "receive", size) end

--- receivefrom([size]): datagram, ip, port; or nil, err.
function m:receivefrom(size) return retry(self, "recvr", "receivefrom", size) end

--- send(datagram): on a connected socket; bytes sent, or nil, err.
function m:send(datagram) return retry(self, "sendr", "send", datagram) end

local function sendto(self, ip, datagram, port) return retry(self, "sendr", "sendto", datagram, ip, port) end

--- sendto(datagram, ip, port): bytes sent, or nil, err. ip may be a host name,
--- looked up in the loop first (LuaSocket's own sendto takes addresses only).
function m:sendto(datagram, ip, port)
  if is_name(ip) then return resolve.each_address(self, ip, sendto, datagram, port) end
  return retry(self, "sendr", "sendto", datagram, ip, port)
end

wrap.common(m)
local setpeername = passthrough_class("setpeername")
local setsockname = passthrough_class("setsockname")

--- setpeername(host, port) / setsockname(host, port): LuaSocket's; a host name
--- is looked up in the loop first ("*" and addresses go to LuaSocket as they are).
function m:setpeername(host, port)
  if is_name(host) then return resolve.each_address(self, host, setpeername, port) end
  return setpeername(self, host, port)
end

function m:setsockname(host, port)
  if is_name(host) then return resolve.each_address(self, host, setsockname, port) end
  return setsockname(self, host, port)
end

return m
