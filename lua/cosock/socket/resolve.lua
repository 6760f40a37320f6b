--- cosock.socket.resolve: the lookups of the socket wrappers' calls that take a
--- host name (tcp connect and bind; udp sendto, setpeername, setsockname). Not
--- LuaSocket API: cosock.socket.tcp and cosock.socket.udp use it.
---
--- A host name is looked up in the loop (src/features/resolver.c, as cosock.dns does)
--- before the wrapper hands an address to LuaSocket, within the socket's
--- timeouts. Numeric addresses and "*" never reach the resolver: the wrapper
--- passes them to LuaSocket as it always did. Without c-ares, or where the call
--- cannot wait (outside a coroutine), nothing is a name here, and LuaSocket
--- resolves it itself (blocking), as before.

local core = require "cosock.core"
core.open "dns" -- (its C functions: added to cosock.core on first use)

local type, ipairs = type, ipairs
local compat = require "cosock.compat"
local pack, unpack = compat.pack, compat.unpack
local isyieldable = compat.isyieldable
local numeric, getaddrinfo, monotime = core.dns_numeric, core.dns_getaddrinfo, core.monotime

local M = {}

--- is_name(host) -> boolean: host must be looked up in the loop first: a
--- string that is not a numeric address (nor "*"), in a call that can wait.
if core.dns == "c-ares" then
  function M.is_name(host)
    return type(host) == "string" and host ~= "*" and not numeric(host) and isyieldable()
  end
else
  function M.is_name() return false end
end

--- family_of(inner) -> "unspec" | "inet" | "inet6": the family of a LuaSocket
--- object's socket, for the lookup's hints. "unspec" while it has no socket
--- (tcp() and udp() before their first use: LuaSocket then takes the family of
--- the address it is given).
function M.family_of(inner)
  if inner:getfd() < 0 then return "unspec" end
  return inner:getfamily() == "inet6" and "inet6" or "inet"
end

--- lookup_for(self, host) -> list, err, deadline: host's addresses for the
--- wrapper self (of its socket's family), waiting as its timeouts allow: the
--- "b" timeout limits the lookup, the "t" one the whole call, so deadline (for
--- wrap.wait) is when the rest of the call must end. nil, "timeout" when time
--- ran out; nil, err (LuaSocket's getaddrinfo string) when the lookup failed.
function M.lookup_for(self, host)
  local block, total = self.timeout, self.total
  if type(block) ~= "number" or block < 0 then block = nil end
  if type(total) ~= "number" or total < 0 then total = nil end
  local deadline, limit = math.huge, block
  if total then
    deadline = monotime() + total
    if limit == nil or total < limit then limit = total end
  end
  local list, err = getaddrinfo(host, M.family_of(self.inner_sock), limit)
  return list, err, deadline
end

--- each_address(self, host, fn, a, b) -> results: fn(self, addr, a, b) for each
--- address of host in turn (looked up as lookup_for does) until one succeeds;
--- the last failure otherwise. For bind, setsockname, setpeername, sendto.
function M.each_address(self, host, fn, a, b)
  local list, err = M.lookup_for(self, host)
  if list == nil then return nil, err end
  for i, e in ipairs(list) do
    local res = pack(fn(self, e.addr, a, b))
    if res[1] or i == #list then return unpack(res, 1, res.n) end
  end
end

return M
