--- cosock.sim.udp: simulated UDP sockets for cosock.sim (doc/simulation.md).
--- While the simulation is on, cosock.socket.udp() makes these. A datagram
--- goes to the socket bound to its address and port (or to "*" and the port;
--- to every such socket for a broadcast or multicast address) after the
--- link's latency, unless the link's loss draws it lost (from the seed).

local net = require "cosock.sim.net"
local sock = require "cosock.sim.sock"
local core = require "cosock.core"

local setmetatable, type, tonumber, tostring, error = setmetatable, type, tonumber, tostring, error
local remove = table.remove
local wait, log, label = sock.wait, net.log, net.label

local DATAGRAMSIZE = 8192 -- LuaSocket's default receive size

local function ready(self, kind)
  if self._st == "closed" or kind == "sendr" then return true end
  return #self._queue > 0
end

local m = sock.methods(ready)
local mt = { __index = m, __tostring = function(s) return s.class .. ": sim#" .. s._id end }

--- new() -> a "udp{unconnected}" socket (cosock.socket.udp() while sim is on).
function m._new()
  return sock.init(setmetatable({ class = "udp{unconnected}", _st = "open", _queue = {}, _dir = {} }, mt))
end

local function bind(self, addr, port)
  local s = net.state()
  local p = port == nil and 0 or net.port(port)
  if p == nil then return nil, "service not supported for socket type" end
  if p == 0 then p = net.ephemeral() end
  local key = addr .. ":" .. p
  if s.udp[key] then return nil, "address already in use" end
  if self.lport then s.udp[self.laddr .. ":" .. self.lport] = nil end
  s.udp[key] = self
  s.udplist[#s.udplist + 1] = self
  self.laddr, self.lport = addr, p
  return 1
end

--- setsockname(host, port): 1, or nil, "address already in use".
function m:setsockname(host, port)
  if self._st == "closed" then return nil, "closed" end
  local addr, err = net.resolve(host, 2)
  if not addr then return nil, err end
  return bind(self, addr, port)
end

--- setpeername(host, port): "udp{connected}" to that peer; "*" unconnects.
function m:setpeername(host, port)
  if self._st == "closed" then return nil, "closed" end
  if host == "*" then
    self.paddr, self.pport, self.class = nil, nil, "udp{unconnected}"
    return 1
  end
  local addr, err = net.resolve(host, 2)
  if not addr then return nil, err end
  local p = net.port(port)
  if p == nil then return nil, "Name or service not known" end
  if not self.lport then bind(self, net.state().address, 0) end
  self.paddr, self.pport, self.class = addr, p, "udp{connected}"
  return 1
end

local function group(addr)
  local a = tonumber(addr:match("^(%d+)%."))
  return addr == "255.255.255.255" or (a ~= nil and a >= 224 and a <= 239)
end

-- The datagram reaches `to`.
local function arrive(to, dg, from)
  if to._st == "closed" then return end
  if to.paddr and (to.paddr ~= from.laddr or to.pport ~= from.lport) then return end
  to._queue[#to._queue + 1] = { dg, from.laddr, from.lport }
  to._received = (to._received or 0) + #dg
  net.wake(to, "recvr")
end

local function targets(addr, port)
  local s, list = net.state(), {}
  if group(addr) then
    for _, u in ipairs(s.udplist) do
      if u.lport == port and u._st ~= "closed" and s.udp[u.laddr .. ":" .. port] == u then
        list[#list + 1] = u
      end
    end
  else
    list[1] = s.udp[addr .. ":" .. port] or s.udp["0.0.0.0:" .. port]
  end
  return list
end

local function sendto(self, dg, addr, port)
  if type(dg) ~= "string" then
    error("bad argument #1 to 'sendto' (string expected, got " .. type(dg) .. ")", 3)
  end
  if self._st == "closed" then return nil, "closed" end
  if not self.lport then bind(self, net.state().address, 0) end
  local l = net.link(self.laddr, addr)
  local what = label(self.laddr, self.lport) .. " -> " .. label(addr, port) .. " " .. #dg .. " bytes"
  self._sent = (self._sent or 0) + #dg
  if net.down(self.laddr, addr, l) or (l.loss > 0 and net.draw() < l.loss) then
    log("lost", what, { from = self.laddr, to = addr, bytes = #dg })
    return #dg
  end
  log("sendto", what, { from = self.laddr, to = addr, bytes = #dg })
  local at = net.transit(self._dir, l, #dg, false)
  for _, to in ipairs(targets(addr, port)) do
    if to ~= self then net.at(at, arrive, to, dg, self) end
  end
  return #dg
end

--- sendto(datagram, host, port): bytes sent (a datagram lost on the way was
--- sent all the same), or nil, err.
function m:sendto(dg, host, port)
  local addr, err = net.resolve(host, 2)
  if not addr then return nil, err end
  local p = net.port(port)
  if p == nil then return nil, "Name or service not known" end
  return sendto(self, dg, addr, p)
end

--- send(datagram): to the peer of a connected socket.
function m:send(dg)
  if not self.paddr then return nil, "not connected" end
  return sendto(self, dg, self.paddr, self.pport)
end

local function receive(self, size, what)
  if self._st == "closed" then return nil, "closed" end
  local ok, dl = true, nil
  while #self._queue == 0 do
    ok, dl = wait(self, "recvr", dl, what)
    if not ok then return nil, "timeout" end
    if self._st == "closed" then return nil, "closed" end
  end
  local d = remove(self._queue, 1)
  return d[1]:sub(1, size), d[2], d[3]
end

--- receive(size): one datagram (cut to size), or nil, "timeout" / "closed".
function m:receive(size)
  size = size == nil and DATAGRAMSIZE or net.count("receive", 1, tonumber(size) or size)
  local dg, err = receive(self, size, "receive")
  if dg then return dg end
  return nil, err
end

--- receivefrom(size): datagram, address, port; or nil, err.
function m:receivefrom(size)
  size = size == nil and DATAGRAMSIZE or net.count("receivefrom", 1, tonumber(size) or size)
  return receive(self, size, "receivefrom")
end

function m:dirty() return #self._queue > 0 end

--- close(): 1; its address and port are free again.
function m:close()
  if self._st == "closed" then return 1 end
  local s = net.state()
  if s and self.lport and s.udp[self.laddr .. ":" .. self.lport] == self then
    s.udp[self.laddr .. ":" .. self.lport] = nil
  end
  self._st, self._queue = "closed", {}
  if core.close_wakes() then net.wake(self, "recvr") end
  return 1
end

sock.check_self(m, mt, "simulated udp socket")
return m
