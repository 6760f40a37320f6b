--- cosock.socket.tcp: TCP wrappers whose blocking calls yield to the cosock loop.
---
--- The module is the method table shared by every tcp wrapper, and is callable:
--- `tcp()` returns a new wrapper of class "tcp{master}" (or nil, err). A wrapper is
--- { inner_sock = <LuaSocket tcp, non-blocking>, class = <inner's class> }.
--- receive/accept wait for readability, send/connect for writability; see
--- cosock.socket.wrap for the timeout rule.

local luasocket = require "socket"
local wrap = require "cosock.socket.wrap"

local setmetatable = setmetatable
local wait = wrap.wait
local passthrough, passthrough_class = wrap.passthrough, wrap.passthrough_class

local m = {}
local mt -- metatable of every tcp wrapper, set below

--- Wrap a LuaSocket tcp object (made non-blocking here).
local function new(inner)
  inner:settimeout(0)
  return setmetatable({ inner_sock = inner, class = inner.class }, mt)
end

mt = wrap.methods(m, wrap.maker(luasocket.tcp, new))

-- Private (underscore, like _wake): wrap a LuaSocket tcp object; used by
-- cosock.socket for tcp4/tcp6. Not LuaSocket API.
m._from_inner = new

--- accept(): wait for a connection; returns a "tcp{client}" wrapper or nil, err.
function m:accept()
  local inner = self.inner_sock
  local client, err = inner:accept()
  if client then return new(client) end
  local deadline
  while err == "timeout" do
    deadline = wait(self, "recvr", deadline)
    if deadline == nil then return nil, err end
    client, err = inner:accept()
    if client then return new(client) end
  end
  return nil, err
end

-- Errors from a non-blocking connect that mean "still connecting".
local CONNECTING = {
  ["timeout"] = true,
  ["Operation already in progress"] = true,
  ["Operation now in progress"] = true,
}

--- connect(host, port): start the connection, wait for writability, then ask again.
--- Returns LuaSocket's 1.0, or nil, err ("connection refused", "timeout", ...).
function m:connect(host, port)
  local inner = self.inner_sock
  local ok, err = inner:connect(host, port)
  if ok then
    self.class = inner.class
    return ok
  end
  if not CONNECTING[err] then return nil, err end
  local deadline
  repeat
    deadline = wait(self, "sendr", deadline)
    if deadline == nil then return nil, "timeout" end
    ok, err = inner:connect(host, port)
    -- After an in-progress connect, a retry that says "already connected" is the
    -- completion of our own connect (some systems report it that way).
    if ok or err == "already connected" then
      self.class = inner.class
      return ok or 1.0 -- LuaSocket's success value (a float)
    end
  until not CONNECTING[err]
  return nil, err
end

wrap.common(m)
m.receive = wrap.receive
m.send = wrap.send
m.bind = passthrough_class("bind")
m.listen = passthrough_class("listen")
m.shutdown = passthrough("shutdown")
m.getstats = passthrough("getstats") -- (send and receive keep LuaSocket's counts)
m.setstats = passthrough("setstats")

--- class(): the inner socket's class. (Every wrapper also has a `class` field,
--- which shadows this method; it is here because cosock's method table lists it.)
function m.class(self)
  return self.inner_sock.class
end

return m
