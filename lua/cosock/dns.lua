--- cosock.dns (also cosock.socket.dns): LuaSocket's socket.dns for code run by
--- the cosock loop, and the lookups of the wrappers' calls that take a host name.
---
--- With c-ares built in (require("cosock.core").dns == "c-ares"), a lookup in a
--- task waits in the loop like a socket does: other tasks run meanwhile, many
--- lookups run at once, /etc/hosts and /etc/resolv.conf are honoured (c-ares
--- reads them). Results and error strings are LuaSocket's. Outside a coroutine
--- there is no task to park, so a lookup there blocks, with LuaSocket's own
--- resolver; without c-ares every lookup does (this module is then LuaSocket's
--- socket.dns plus setservers/configure, which say so). The wrappers' own
--- lookups are in cosock.socket.resolve. doc/dns.md is the reference.

-- LuaSocket, also when a program has put cosock.socket in its place
-- (package.loaded.socket = cosock.socket), where this module loads on first
-- use: LuaSocket's functions are then those of its C part, socket.core
-- (LuaSocket's socket is that table, with Lua helpers added).
local luasocket = require "socket"
if luasocket == package.loaded["cosock.socket"] then luasocket = require "socket.core" end
local core = require "cosock.core"
core.open "dns" -- (its C functions: added to cosock.core on first use)

local type, error, select, ipairs, tostring, tonumber = type, error, select, ipairs, tostring, tonumber
local compat = require "cosock.compat"
local isyieldable = compat.isyieldable
local ls = luasocket.dns

local M = {}

--- Which resolver lookups use: "c-ares" (non-blocking) or "luasocket" (blocking).
M.resolver = core.dns

M.gethostname = ls.gethostname

local ASYNC = core.dns == "c-ares"
local numeric = core.dns_numeric
local getaddrinfo, gethost, nameinfo = core.dns_getaddrinfo, core.dns_gethost, core.dns_nameinfo

local NO_CARES = "cosock-native was built without c-ares: name lookups use LuaSocket's blocking resolver"

-- True when this call can wait in the loop for a lookup.
local function can_wait()
  return ASYNC and isyieldable()
end

-- LuaSocket's luaL_checkstring for argument 1 of fname (a number is a string).
local function check_host(fname, n, host, argn)
  local t = type(host)
  if t ~= "string" and t ~= "number" then
    error("bad argument #" .. (argn or 1) .. " to '" .. fname .. "' (string expected, got " ..
      (n == 0 and "no value" or t) .. ")", 3)
  end
  return tostring(host)
end

---------------------------------------------------------------------------
-- LuaSocket's socket.dns
---------------------------------------------------------------------------

--- toip(host) -> ip, {name=, alias={...}, ip={...}} | nil, err
--- (IPv4; a dotted quad is looked up by address, as LuaSocket does).
function M.toip(...)
  if not can_wait() then return ls.toip(...) end
  local host = check_host("toip", select("#", ...), ...)
  local name, resolved = gethost(host, nil)
  if name == nil then return nil, resolved end
  return resolved.ip[1], resolved
end

--- tohostname(host) -> name, {name=, alias={...}, ip={...}} | nil, err
function M.tohostname(...)
  if not can_wait() then return ls.tohostname(...) end
  local host = check_host("tohostname", select("#", ...), ...)
  return gethost(host, nil)
end

--- getaddrinfo(host) -> {{family="inet"|"inet6", addr=...}, ...} | nil, err
function M.getaddrinfo(...)
  if not can_wait() then return ls.getaddrinfo(...) end
  local host = check_host("getaddrinfo", select("#", ...), ...)
  return getaddrinfo(host, "unspec", nil)
end

--- getnameinfo(host, serv) -> {names...}[, service] | nil, err: host (a name or
--- an address) resolved, then each of its addresses looked up in reverse (the
--- address itself when it has no name); serv turned into a service name. As
--- LuaSocket: the service comes back only when serv was given.
function M.getnameinfo(host, serv)
  if host == nil and serv == nil then error("host and serv cannot be both nil", 2) end
  -- Without a host nothing goes to the resolver (the service comes from /etc/services).
  if not can_wait() or host == nil then return ls.getnameinfo(host, serv) end
  host = check_host("getnameinfo", 1, host)
  if serv ~= nil then serv = check_host("getnameinfo", 2, serv, 2) end
  -- A port number is used as it is (c-ares refuses a service "0"); a service
  -- name goes to c-ares, which looks it up in /etc/services.
  local port = serv and serv:match("^%d+$") and tonumber(serv)
  if port and port > 65535 then port = nil end
  local list, err = getaddrinfo(host, "unspec", nil, not port and serv or nil)
  if list == nil then return nil, err end
  local names, service = {}, nil
  for i, a in ipairs(list) do
    local node, s = nameinfo(a.addr, port or a.port or 0, true, serv ~= nil, nil)
    names[i] = node or a.addr
    service = s
  end
  if serv ~= nil then return names, service end
  return names
end

---------------------------------------------------------------------------
-- Where lookups go
---------------------------------------------------------------------------

local config = { servers = nil, timeout = nil, tries = nil }

-- "a.b.c.d", "a.b.c.d:port", "v6", "[v6]:port" -> the entry as c-ares takes it.
local function server_entry(fname, i, s)
  if type(s) ~= "string" then
    error("bad argument #1 to '" .. fname .. "' (entry " .. i .. ": string expected, got " .. type(s) .. ")", 4)
  end
  local host, port = s:match("^%[(.+)%]:(%d+)$")
  if host == nil then host, port = s:match("^([%d.]+):(%d+)$") end
  if host == nil then host = s end
  local family = numeric(host)
  if not family or (family == 4 and not host:find("^%d+%.%d+%.%d+%.%d+$")) or host:find("%%") then
    error("bad argument #1 to '" .. fname .. "' (entry " .. i .. ": numeric address expected, got '" .. s .. "')", 4)
  end
  port = tonumber(port or 53)
  if port < 1 or port > 65535 then
    error("bad argument #1 to '" .. fname .. "' (entry " .. i .. ": port out of range in '" .. s .. "')", 4)
  end
  if family == 6 then return "[" .. host .. "]:" .. port end
  return host .. ":" .. port
end

local function servers_csv(fname, list)
  if list == nil then return nil end
  if type(list) ~= "table" then
    error("bad argument #1 to '" .. fname .. "' (table or nil expected, got " .. type(list) .. ")", 3)
  end
  if #list == 0 then
    error("bad argument #1 to '" .. fname .. "' (at least one server expected)", 3)
  end
  local out = {}
  for i, s in ipairs(list) do out[i] = server_entry(fname, i, s) end
  return table.concat(out, ",")
end

--- setservers(list) -> true | nil, err: the DNS servers lookups ask from now on,
--- e.g. {"127.0.0.1:5353", "[::1]:53"} (port 53 when none is given); nil goes
--- back to the system's (/etc/resolv.conf, or COSOCK_DNS_SERVERS when set).
--- Lookups already waiting finish with the servers they started with.
function M.setservers(list)
  if not ASYNC then return nil, NO_CARES end
  local csv = servers_csv("setservers", list)
  core.dns_config(csv, config.timeout, config.tries)
  config.servers = csv
  return true
end

--- configure{servers=, timeout=, tries=} -> true | nil, err: the servers (as
--- setservers), how long c-ares waits for an answer on its first try (seconds;
--- each round waits twice as long as the one before) and how many tries it makes.
--- A field left out takes the system's value (resolv.conf's options, else
--- c-ares's: 5 s, 4 tries).
function M.configure(opts)
  if type(opts) ~= "table" then
    error("bad argument #1 to 'configure' (table expected, got " .. type(opts) .. ")", 2)
  end
  if not ASYNC then return nil, NO_CARES end
  local t, n = opts.timeout, opts.tries
  if t ~= nil and (type(t) ~= "number" or t <= 0 or t > 3600) then
    error("bad argument #1 to 'configure' (timeout: seconds > 0 and <= 3600 expected, got " .. tostring(t) .. ")", 2)
  end
  if n ~= nil and (compat.math_type(n) ~= "integer" or n < 1 or n > 100) then
    error("bad argument #1 to 'configure' (tries: integer from 1 to 100 expected, got " .. tostring(n) .. ")", 2)
  end
  local csv = servers_csv("configure", opts.servers)
  core.dns_config(csv, t, n)
  config.servers, config.timeout, config.tries = csv, t, n
  return true
end

return M
