--- cosock.ssl: LuaSec's `ssl` for cosock sockets.
---
--- `wrap(tcp_socket, config)` wraps the cosock tcp wrapper's LuaSec-wrapped inner
--- socket in a wrapper of class "tls{}" whose dohandshake/receive/send wait by
--- yielding on LuaSec's "wantread"/"wantwrite". Quirk kept from cosock: when a
--- receive's or send's wait times out, the error returned is LuaSec's
--- "wantread"/"wantwrite", not "timeout" (a handshake's says "timeout").
--- The other LuaSec connection methods pass through.
--- The module also carries LuaSec's module functions (newcontext, loadcertificate,
--- config, _VERSION) and `https` (LuaSec's ssl.https through cosock.asyncify,
--- loaded on first use).

-- LuaSec is optional for the rest of cosock: say what is missing when it is.
local modname = ... -- (the name require loads this module as)
local found, luasec = pcall(require, "ssl")
if not found then
  -- Lua 5.1's and LuaJIT's require leave their "loading" mark in
  -- package.loaded when a module raises (anything there now is that mark);
  -- the next require would then say "loop or previous error".
  if type(modname) == "string" then package.loaded[modname] = nil end
  error("cosock.ssl needs LuaSec (the Lua module 'ssl'; Debian package lua-sec, rock luasec): "
        .. tostring(luasec), 0)
end
local wrap = require "cosock.socket.wrap"

local setmetatable, assert = setmetatable, assert
local wait, settimeout = wrap.wait, wrap.settimeout
-- Which wait a handshake that did not finish asks for.
local HANDSHAKE_WAIT = { wantread = "recvr", wantwrite = "sendr" }
local passthrough = wrap.passthrough

local m = {}

-- The method table of tls wrappers (LuaSec's https.lua forwards every function of
-- getmetatable(sock).__index; it copies functions only, so data fields of a
-- wrapper live in the wrapper, not here).
local tls = {}
local tls_mt = wrap.native({ __index = tls })

--- wrap(tcp_socket, config): config is a LuaSec config table or context.
--- Returns a "tls{}" wrapper, or nil, err. As in cosock (and LuaSec) the new
--- wrapper has no timeout of its own: the tcp wrapper's is not carried over.
--- Anything without an inner_sock fails as in cosock ("tcp inner_sock is null").
function m.wrap(tcp_socket, config)
  -- (cosock.sim's sockets have no descriptor for LuaSec: doc/simulation.md#tls)
  local sim_tls = type(tcp_socket) == "table" and tcp_socket._sim_tls
  if sim_tls then return sim_tls(tcp_socket, config) end
  local tcp_inner = assert(tcp_socket.inner_sock, "tcp inner_sock is null")
  local inner, err = luasec.wrap(tcp_inner, config)
  if not inner then return nil, err end
  inner:settimeout(0)
  return setmetatable({ inner_sock = inner, class = "tls{}", _wouldblock = "wantread" }, tls_mt)
end

m.newcontext = luasec.newcontext
m.loadcertificate = luasec.loadcertificate
m.config = luasec.config
m._VERSION = luasec._VERSION
m._COPYRIGHT = luasec._COPYRIGHT

--- dohandshake(): wait on wantread/wantwrite until the handshake is done.
--- Returns true, or what cosock returns: LuaSec's own failure (false, err), and
--- false, "timeout" when a wait timed out (cosock's handshake has no
--- wantread/wantwrite quirk: that is its receive's and send's). nil, "closed"
--- when the wrapper was closed, before the call or by another task during a
--- wait: LuaSec's dohandshake on a closed object crashes the process.
function tls:dohandshake()
  if self._closed then return nil, "closed" end
  local inner = self.inner_sock
  local ok, err = inner:dohandshake()
  if ok then return ok end
  local deadline
  while true do
    local kind = HANDSHAKE_WAIT[err]
    if kind == nil then return ok, err end
    deadline = wait(self, kind, deadline)
    if deadline == nil then return false, "timeout" end
    if self._closed then return nil, "closed" end
    ok, err = inner:dohandshake()
    if ok then return ok end
  end
end

-- receive: the tcp wrapper's, on the TLS stream (src/features/wrapper.c also reads
-- OpenSSL 3's "unexpected eof while reading" as the peer closing).
tls.receive = wrap.receive
tls.send = wrap.send
tls.close = wrap.close
--- settimeout(t [, mode]): the tcp wrapper's (see cosock.socket.wrap), but
--- returns nothing, as cosock's tls wrappers do.
function tls.settimeout(self, t, mode)
  settimeout(self, t, mode)
end
tls.setwaker = wrap.setwaker
tls._wake = wrap._wake

for _, name in ipairs {
  "config", "dirty", "getalpn", "getfd", "getfinished", "getpeercertificate",
  "getpeerchain", "getpeerverification", "getpeerfinished", "getsniname",
  "getstats", "info", "loadcertificate", "newcontext", "setdane", "setstats",
  "settlsa", "sni", "want", "exportkeyingmaterial",
} do
  tls[name] = passthrough(name)
end

--- class(): "tls{}" (shadowed by the wrapper's class field, as for tcp).
function tls.class()
  return "tls{}"
end

-- https: LuaSec's ssl.https through cosock.asyncify, loaded on first use.
return require("cosock.lazy")(m, { https = "cosock.ssl.https" }, { https = true })
