--- cosock.socket: LuaSocket's `socket` module, shaped the same, for code run by the
--- cosock loop. Every call that would block yields to the loop instead:
--- `select(recvt, sendt, timeout)` is `coroutine.yield(recvt, sendt, timeout)`, and
--- sockets are wrappers (cosock.socket.tcp / cosock.socket.udp) that wait by yielding.
--- try/newtry/protect are written in Lua so that a task may yield inside them.
--- `http` is LuaSocket's socket.http run through cosock.asyncify, loaded on first use.

local luasocket = require "socket"
local tcp = require "cosock.socket.tcp"
local udp = require "cosock.socket.udp"
local wrap = require "cosock.socket.wrap"

local core = require "cosock.core"
local yield = core.yield -- coroutine.yield, clearer outside a task; ends as every wait ends
local type, error, setmetatable, getmetatable, select =
  type, error, setmetatable, getmetatable, select
local compat = require "cosock.compat"
local ypcall = compat.pcall -- (5.1: a pcall a task may wait in)

local m = {}

---------------------------------------------------------------------------
-- Waiting
---------------------------------------------------------------------------

--- select(recvt, sendt, timeout) -> recvr, sendr, err
--- The loop resumes the task with the lists of ready objects (nil for a kind with
--- none), or nil, nil, "timeout". A nil timeout waits without limit; zero or negative
--- times out on the next pass.
--- In a cancelled scope, or past its deadline, the timeout raises the
--- cancellation instead (core.yield: the end every wait has).
function m.select(recvt, sendt, timeout)
  return yield(recvt, sendt, timeout)
end

--- sleep(t): give the processor to other tasks for t seconds; returns nothing.
--- As in cosock 0.2.0, t goes to the loop unchecked: a numeric string works, and
--- no t (nil) waits without a limit (until the task is cancelled).
function m.sleep(t)
  yield(nil, nil, t)
end

---------------------------------------------------------------------------
-- Sockets
---------------------------------------------------------------------------

m.tcp = tcp -- callable method table: tcp() -> "tcp{master}" wrapper
m.udp = udp -- callable method table: udp() -> "udp{unconnected}" wrapper

local tcp_from, udp_from = tcp._from_inner, udp._from_inner
local maker = wrap.maker

m.tcp4 = maker(luasocket.tcp4, tcp_from)
m.tcp6 = maker(luasocket.tcp6, tcp_from)
m.udp4 = maker(luasocket.udp4, udp_from)
m.udp6 = maker(luasocket.udp6, udp_from)

--- bind(host, port, backlog): LuaSocket's socket.bind: for each address host
--- resolves to, a tcp4/tcp6 socket with reuseaddr set, then bind and listen;
--- the first that listens is returned ("tcp{server}"), or nil and the last
--- error (a socket that failed is closed). cosock 0.2.0 set reuseaddr after
--- listen, where it does nothing, so a restarted server could not bind its
--- port while a connection of the old one was in TIME_WAIT.
-- A numeric address is its own lookup (no wait in the loop, as cosock's bind
-- never waited for one).
local numeric = require("cosock.core").dns_numeric
local function addresses(host)
  local f = numeric and numeric(host)
  if f then return { { family = f == 6 and "inet6" or "inet", addr = host } } end
  return m.dns.getaddrinfo(host)
end

function m.bind(host, port, backlog)
  if host == "*" then host = "0.0.0.0" end
  local info, err = addresses(host)
  if not info then return nil, err end
  err = "no info on address"
  for _, alt in ipairs(info) do
    local skt, ok
    skt, err = (alt.family == "inet" and m.tcp4 or m.tcp6)()
    if not skt then return nil, err end
    skt:setoption("reuseaddr", true)
    ok, err = skt:bind(alt.addr, port)
    if ok then ok, err = skt:listen(backlog) end
    if ok then return skt end
    skt:close()
  end
  return nil, err
end

local function connect_with(create, address, port, locaddr, locport)
  local skt, err = create()
  if not skt then return nil, err end
  local ok
  if locaddr then
    ok, err = skt:bind(locaddr, locport or 0)
    if not ok then
      skt:close()
      return nil, err
    end
  end
  ok, err = skt:connect(address, port)
  if not ok then
    skt:close()
    return nil, err
  end
  return skt
end

--- connect(address, port, locaddr, locport): a connected tcp wrapper, or nil, err.
function m.connect(address, port, locaddr, locport)
  return connect_with(tcp, address, port, locaddr, locport)
end

--- connect4 / connect6: the same, on an IPv4 / IPv6 socket.
function m.connect4(address, port, locaddr, locport)
  return connect_with(m.tcp4 or tcp, address, port, locaddr, locport)
end

function m.connect6(address, port, locaddr, locport)
  return connect_with(m.tcp6, address, port, locaddr, locport)
end

---------------------------------------------------------------------------
-- try / newtry / protect (in Lua: a task may yield inside them)
---------------------------------------------------------------------------

-- Errors raised by try carry this metatable; protect recognises them by it.
-- No __tostring: printed, such an error is a plain table, as in cosock.
local TRY_ERROR = {}

--- newtry(finalizer): a try function. try(v, ...) returns all its arguments when v
--- is not nil; when v is nil it calls the finalizer (when it is a function; any
--- other value is ignored) and raises a private error object holding the second
--- argument. Only nil raises: try(false, msg) returns false, msg. (cosock 0.2.0.)
function m.newtry(finalizer)
  return function(...)
    if (...) ~= nil then return ... end
    if type(finalizer) == "function" then finalizer() end
    error(setmetatable({ (select(2, ...)) }, TRY_ERROR))
  end
end

m.try = m.newtry()

-- The end of a protected call. Reached by a tail call from the function protect
-- made, so level 3 below is the caller of that function's caller: a string
-- error raised again gets that position in front, as cosock 0.2.0's does.
-- (PUC 5.1 counts the tail call as a level of its own: 4 there.)
local CALLERS_CALLER = compat.puc51 and 4 or 3
local function protected(ok, ...)
  if ok then return ... end
  local e = ...
  if getmetatable(e) == TRY_ERROR then return nil, e[1] end
  -- (only a string gets a position: 5.1 and 5.2 would give one to a number)
  error(e, type(e) == "string" and CALLERS_CALLER or 0)
end

--- protect(fn): a function that calls fn and returns its values; a failed try
--- gives nil and the try's message, as LuaSocket's protect (cosock 0.2.0 gave a
--- lone nil, losing the message: a refused http.request read just nil); any
--- other error is raised again (see protected for the position a string gets).
function m.protect(fn)
  return function(...)
    return protected(ypcall(fn, ...))
  end
end

---------------------------------------------------------------------------
-- LuaSocket's own (dns, cosock.dns, is below: lookups that wait in the loop)
---------------------------------------------------------------------------

m.gettime = luasocket.gettime
m.choose = luasocket.choose
m.sink = luasocket.sink
m.sinkt = luasocket.sinkt
m.skip = luasocket.skip
m.source = luasocket.source
m.sourcet = luasocket.sourcet
m._VERSION = luasocket._VERSION
m._SETSIZE = luasocket._SETSIZE
m.BLOCKSIZE = luasocket.BLOCKSIZE
m._DATAGRAMSIZE = luasocket._DATAGRAMSIZE

---------------------------------------------------------------------------
-- dns and http, loaded on first use (http requires cosock.asyncify, which
-- requires this module: loading it lazily keeps the modules free of a
-- require cycle). pairs lists dns, as cosock 0.2.0's does, not http.
---------------------------------------------------------------------------

return require("cosock.lazy")(m, { dns = "cosock.dns", http = "cosock.socket.http" },
                              { http = true })
