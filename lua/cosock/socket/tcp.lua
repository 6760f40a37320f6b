--- cosock.socket.tcp: TCP wrappers whose blocking calls yield to the cosock loop.
---
--- The module is the method table shared by every tcp wrapper, and is callable:
--- `tcp()` returns a new wrapper of class "tcp{master}" (or nil, err). A wrapper is
--- { inner_sock = <LuaSocket tcp, non-blocking>, class = <inner's class> }.
--- receive/accept wait for readability, send/connect for writability; see
--- cosock.socket.wrap for the timeout rule.

local luasocket = require "socket"
local wrap = require "cosock.socket.wrap"
local resolve = require "cosock.socket.resolve"
local core = require "cosock.core"

local setmetatable, ipairs = setmetatable, ipairs
local wait = wrap.wait
local is_name = resolve.is_name
local passthrough, passthrough_class = wrap.passthrough, wrap.passthrough_class

local m = {}
local mt -- metatable of every tcp wrapper, set below

--- Wrap a LuaSocket tcp object (made non-blocking here). The `_closed = nil`
--- is never seen (no field is made) but sizes the table for two fields more:
--- the loop's fd cache and close's _closed then fit without growing it (a
--- rehash on each connection's first wait).
local function new(inner)
  inner:settimeout(0)
  return setmetatable({ inner_sock = inner, class = inner.class, _closed = nil }, mt)
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

-- One connect to a numeric host: start it, wait for writability, then ask
-- again (LuaSocket's 1.0 on success). deadline: nil, or where an earlier part
-- of the call (a lookup) left it.
local function connect_to(self, host, port, deadline)
  local inner = self.inner_sock
  local ok, err = inner:connect(host, port)
  if ok then
    self.class = inner.class
    return ok
  end
  if not CONNECTING[err] then return nil, err end
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

-- A connect to a host name: looked up in the loop (cosock.dns), then each
-- address in turn until one connects, as LuaSocket's blocking connect does.
-- A socket that had no family yet (tcp()) gets a fresh one for each address
-- after the first (so IPv6 then IPv4 both work); one that has a family skips
-- addresses of the other.
local function connect_by_name(self, host, port)
  local fresh = self.inner_sock:getfd() < 0
  local list, err, deadline = resolve.lookup_for(self, host)
  if list == nil then return nil, err end
  local family = resolve.family_of(self.inner_sock)
  local ok
  for i, a in ipairs(list) do
    if fresh and i > 1 then
      local new = luasocket.tcp()
      if new then
        new:settimeout(0)
        core.closing(self)
        self.inner_sock:close()
        self.inner_sock = new
      end
    end
    if fresh or a.family == family then
      ok, err = connect_to(self, a.addr, port, deadline)
      if ok then return ok end
      if err == "timeout" then return nil, err end
    end
  end
  return nil, err
end

--- connect(host, port): start the connection, wait for writability, then ask again.
--- Returns 1, or nil, err ("connection refused", "timeout", ...). A host name is
--- looked up first without blocking the loop (cosock.dns); numeric addresses go
--- to LuaSocket as they are.
function m:connect(host, port)
  if is_name(host) then return connect_by_name(self, host, port) end
  return connect_to(self, host, port, nil)
end

wrap.common(m)
m.receive = wrap.receive
m.send = wrap.send
local bind = passthrough_class("bind")
--- bind(host, port): LuaSocket's; a host name is looked up in the loop first.
function m:bind(host, port)
  if is_name(host) then return resolve.each_address(self, host, bind, port) end
  return bind(self, host, port)
end
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
