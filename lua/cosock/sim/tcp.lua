--- cosock.sim.tcp: simulated TCP sockets for cosock.sim (doc/simulation.md).
--- While the simulation is on, cosock.socket.tcp() makes these: they connect
--- to listeners of the same simulation by address and port, carry bytes over
--- the links of cosock.sim.net on the virtual clock, and answer every call as
--- the real wrappers do (values, errors, partial results, timeouts).
---
--- A connection is two endpoints (`_peer` of each other). Each direction
--- keeps its bytes in order (net.transit). A sender's bytes count against its
--- `sndbuf` until they arrive (a full buffer is a partial write, then a wait).

local net = require "cosock.sim.net"
local sock = require "cosock.sim.sock"
local core = require "cosock.core"

local setmetatable, type, tonumber, tostring, error = setmetatable, type, tonumber, tostring, error
local min, remove, concat = math.min, table.remove, table.concat
local wait, log, label = sock.wait, net.log, net.label

local RESET = "connection reset by peer"

-- Whether a call of kind would make progress now (the waker protocol asks).
local function ready(self, kind)
  local st = self._st
  if st == "closed" then return true end
  if kind == "recvr" then
    if st == "server" then return #self._pending > 0 end
    return st == "client" and (#self._rbuf > 0 or self._fin or self._reset ~= nil)
  end
  if st == "connecting" then return self._cres ~= nil end
  return st == "client" and (self._reset ~= nil or self._peer_gone
    or self._inflight < self._link.sndbuf)
end

local m = sock.methods(ready)
local mt = { __index = m, __tostring = function(s) return s.class .. ": sim#" .. s._id end }

local function new(class, st)
  return sock.init(setmetatable({ class = class, _st = st, _rbuf = "", _inflight = 0 }, mt))
end

--- new() -> a "tcp{master}" socket (cosock.socket.tcp() while sim is on).
function m._new() return new("tcp{master}", "master") end

local function both_wake(s)
  net.wake(s, "recvr")
  net.wake(s, "sendr")
end

local function where(self) return label(self.laddr, self.lport) end

---------------------------------------------------------------------------
-- Connecting
---------------------------------------------------------------------------

-- The server's answer reaches the client.
local function established(cl, srv)
  if cl._st ~= "connecting" then -- closed meanwhile: the server's end is reset
    srv._reset = RESET
    both_wake(srv)
    return
  end
  cl._st, cl.class, cl._cres, cl._peer = "client", "tcp{client}", true, srv
  local st = net.state()
  st.conns[#st.conns + 1] = cl
  log("connected", where(cl) .. " -> " .. label(cl.paddr, cl.pport),
    { from = cl.laddr, to = cl.paddr, port = cl.pport })
  net.wake(cl, "sendr")
end

local function refused(cl)
  if cl._st ~= "connecting" then return end
  cl._cres = "connection refused"
  log("refused", where(cl) .. " -> " .. label(cl.paddr, cl.pport),
    { from = cl.laddr, to = cl.paddr, port = cl.pport })
  net.wake(cl, "sendr")
end

local function listener_at(addr, port)
  local b = net.state().bound
  local l = b[addr .. ":" .. port] or b["0.0.0.0:" .. port]
  if l and l._st == "server" then return l end
end

-- The client's SYN reaches the server's address.
local function syn(cl)
  local addr, port = cl.paddr, cl.pport
  if cl._st ~= "connecting" or net.down(cl.laddr, addr) then return end -- a black hole: no answer
  local l = listener_at(addr, port)
  local back = {}
  if l == nil then
    net.at(net.transit(back, cl._link, 0, true), refused, cl)
    return
  end
  if #l._pending >= l._backlog then return end -- a full backlog drops it; the client times out
  local srv = new("tcp{client}", "client")
  srv.laddr, srv.lport, srv.paddr, srv.pport = addr, port, cl.laddr, cl.lport
  srv._peer, srv._link, srv._dir = cl, cl._link, back
  l._pending[#l._pending + 1] = srv
  net.wake(l, "recvr")
  net.at(net.transit(back, cl._link, 0, true), established, cl, srv)
end

-- One connect to a numeric address; the wait as the real wrapper's.
local function connect_to(self, addr, port)
  if self._st == "master" or self._st == "bound" then
    local s = net.state()
    if self._st == "bound" then s.bound[self.laddr .. ":" .. self.lport] = nil end
    if self.laddr == nil or self.laddr == "0.0.0.0" then self.laddr = s.address end
    self.lport = self.lport or net.ephemeral()
    self.paddr, self.pport = addr, port
    self._st, self._cres = "connecting", nil
    self._link, self._dir = net.link(self.laddr, addr), {}
    log("connect", where(self) .. " -> " .. label(addr, port), { from = self.laddr, to = addr, port = port })
    net.at(net.transit(self._dir, self._link, 0, true), syn, self)
  end
  local ok, dl = true, nil
  while self._cres == nil do
    ok, dl = wait(self, "sendr", dl, "connect")
    if not ok then return nil, "timeout" end
    if self._st == "closed" then return nil, "closed" end
  end
  if self._cres == true then return 1.0 end
  local err = self._cres
  self._st = "failed"
  return nil, err
end

--- connect(host, port): 1.0, or nil and "connection refused", "timeout",
--- "already connected", "host not found" (a name sim.host declared false).
--- A name the test did not declare raises (the simulation cannot look it up).
function m:connect(host, port)
  local st = self._st
  if st == "client" then return nil, "already connected" end
  if st == "closed" or st == "failed" then return nil, "closed" end
  if st == "server" then return nil, "already connected" end
  local addr, err = net.resolve(host, 2)
  if not addr then return nil, err end
  if tonumber(port) == nil then
    error("bad argument #2 to 'connect' (number expected, got " .. type(port) .. ")", 2)
  end
  local p = net.port(port)
  if p == nil then return nil, "Name or service not known" end
  if st == "connecting" and (addr ~= self.paddr or p ~= self.pport) then
    return nil, "Operation already in progress"
  end
  return connect_to(self, addr, p)
end

---------------------------------------------------------------------------
-- Listening
---------------------------------------------------------------------------

--- bind(host, port): 1, or nil, "address already in use". "*" is every address.
function m:bind(host, port)
  if self._st ~= "master" then return nil, "already bound" end -- (LuaSocket: EINVAL)
  local addr, err = net.resolve(host, 2)
  if not addr then return nil, err end
  local p = port == nil and 0 or net.port(port)
  if p == nil then return nil, "service not supported for socket type" end
  if p == 0 then p = net.ephemeral() end
  local key = addr .. ":" .. p
  local bound = net.state().bound
  if bound[key] then return nil, "address already in use" end
  bound[key] = self
  self.laddr, self.lport, self._st = addr, p, "bound"
  return 1
end

--- listen(backlog): 1; the socket is "tcp{server}" (bound to "0.0.0.0" and a
--- free port first when it was not bound).
function m:listen(backlog)
  if self._st == "master" then self:bind("*", 0) end
  if self._st ~= "bound" then return nil, "not bound" end
  self._st, self.class, self._pending = "server", "tcp{server}", {}
  self._backlog = tonumber(backlog) or 32
  log("listen", where(self), { addr = self.laddr, port = self.lport })
  return 1
end

--- accept(): a "tcp{client}" socket, or nil, "timeout" / "closed".
function m:accept()
  if self._st ~= "server" then return nil, "closed" end
  local ok, dl = true, nil
  while #self._pending == 0 do
    ok, dl = wait(self, "recvr", dl, "accept")
    if not ok then return nil, "timeout" end
    if self._st ~= "server" then return nil, "closed" end
  end
  local c = remove(self._pending, 1)
  log("accept", where(self) .. " <- " .. label(c.paddr, c.pport), { addr = self.laddr, port = self.lport })
  return c
end

---------------------------------------------------------------------------
-- Data
---------------------------------------------------------------------------

-- A segment reaches the other end of the connection.
local function arrive(from, data)
  from._inflight = from._inflight - #data
  net.wake(from, "sendr")
  local to = from._peer
  if to == nil or to._st ~= "client" or from._reset or net.down(from.laddr, to.laddr) then return end
  to._rbuf = to._rbuf .. data
  to._received = (to._received or 0) + #data
  net.wake(to, "recvr")
end

-- The other end closed, or shut down its sending side (its FIN arrived).
-- After a close (not a shutdown) sends fail with "closed".
local function fin(to)
  if to._st ~= "client" then return end
  to._fin = true
  if to._peer and to._peer._st == "closed" then to._peer_gone = true end
  log("fin", where(to) .. " <- " .. label(to.paddr, to.pport), { addr = to.laddr, port = to.lport })
  both_wake(to)
end

-- Puts data (a string) on the wire: in segments of the link's `segment` size.
local function transmit(self, data)
  local l, seg = self._link, self._link.segment
  local n, i = #data, 1
  self._sent = (self._sent or 0) + n
  while i <= n do
    local j = seg and min(n, i + seg - 1) or n
    local piece = data:sub(i, j)
    self._inflight = self._inflight + #piece
    net.at(net.transit(self._dir, l, #piece, true), arrive, self, piece)
    i = j + 1
  end
end

local function index(v, n, default)
  v = tonumber(v) or default
  if v < 0 then v = n + v + 1 end
  return v
end

--- send(data, i, j): the last index sent, nil, nil; or nil, err, last index
--- ("closed" after a reset or the peer's close; "timeout"). A full sndbuf
--- sends what fits (a partial write) and waits for room, as the real wrapper.
function m:send(data, i, j)
  if type(data) ~= "string" then
    if type(data) ~= "number" then
      error("bad argument #1 to 'send' (string expected, got " .. type(data) .. ")", 2)
    end
    data = tostring(data)
  end
  local n = #data
  i, j = index(i, n, 1), index(j, n, n)
  if i < 1 then i = 1 end
  if j > n then j = n end
  if self._st ~= "client" then return nil, "closed", i - 1 end
  local pos, ok, dl = i, true, nil
  log("send", where(self) .. " -> " .. label(self.paddr, self.pport) .. " " .. (j - i + 1) .. " bytes",
    { from = self.laddr, to = self.paddr, bytes = j - i + 1 })
  while pos <= j do
    if self._reset or self._peer_gone or self._st ~= "client" then return nil, "closed", pos - 1 end
    local room = self._link.sndbuf - self._inflight
    if room > 0 then
      local last = min(j, pos + room - 1)
      transmit(self, data:sub(pos, last))
      pos = last + 1
    else
      ok, dl = wait(self, "sendr", dl, "send")
      if not ok then return nil, "timeout", pos - 1 end
    end
  end
  return j, nil, nil
end

-- What receive can take from the buffer now, for each pattern: the part
-- taken, and whether the pattern is complete.
local function take(self, pattern, want)
  local buf = self._rbuf
  if pattern == "line" then
    local e = buf:find("\n", 1, true)
    if e then
      self._rbuf = buf:sub(e + 1)
      return (buf:sub(1, e - 1):gsub("\r", "")), true
    end
    self._rbuf = ""
    return (buf:gsub("\r", "")), false
  elseif pattern == "all" then
    self._rbuf = ""
    return buf, false
  end
  local k = min(want, #buf)
  self._rbuf = buf:sub(k + 1)
  return buf:sub(1, k), k == want
end

local PATTERNS = { ["*l"] = "line", l = "line", ["*a"] = "all", a = "all" }

--- receive(pattern, prefix): "*l" (the default), "*a" or a byte count, with
--- prefix in front (counted in the byte count, as LuaSocket). On failure:
--- nil, err, the partial data ("closed", "timeout", "connection reset by peer").
function m:receive(pattern, prefix)
  local kind, want = "line", nil
  if pattern ~= nil then
    if type(pattern) == "number" then
      kind, want = "count", pattern
    else
      kind = PATTERNS[pattern]
      if kind == nil then
        want = tonumber(pattern)
        if want == nil then error("bad argument #1 to 'receive' (invalid receive pattern)", 2) end
        kind = "count"
      end
    end
    -- (NaN or negative: LuaSocket's words; a fraction is cut, as it casts it)
    if kind == "count" and not (want >= 0) then error("bad argument #1 to 'receive' (invalid receive pattern)", 2) end
    if kind == "count" then want = net.whole(want) end
  end
  if prefix ~= nil and type(prefix) ~= "string" and type(prefix) ~= "number" then
    error("bad argument #2 to 'receive' (string expected, got " .. type(prefix) .. ")", 2)
  end
  if self._st ~= "client" then return nil, "closed" end
  local parts = { prefix and tostring(prefix) or "" }
  local have = #parts[1]
  local ok, dl = true, nil
  while true do
    if kind == "count" and have >= want then return concat(parts) end
    local got, done = take(self, kind, kind == "count" and want - have or nil)
    parts[#parts + 1] = got
    have = have + #got
    if done then return concat(parts) end
    if self._reset then return nil, self._reset, concat(parts) end
    if self._fin then
      if kind == "all" then return concat(parts) end
      return nil, "closed", concat(parts)
    end
    if self._st ~= "client" then return nil, "closed", concat(parts) end
    ok, dl = wait(self, "recvr", dl, "receive")
    if not ok then return nil, "timeout", concat(parts) end
  end
end

--- dirty(): whether received bytes wait in the buffer.
function m:dirty() return #(self._rbuf or "") > 0 end

---------------------------------------------------------------------------
-- Ending
---------------------------------------------------------------------------

--- close(): 1. The peer sees the close after the link's latency; a listener's
--- connections not yet accepted are reset. As cosock's, a task blocked on this
--- socket stays blocked until its timeout, unless cosock.set_close_wakes(true).
function m:close()
  local st = self._st
  if st == "closed" then return 1 end
  local s = net.state()
  if s and (st == "bound" or st == "server") and s.bound[self.laddr .. ":" .. self.lport] == self then
    s.bound[self.laddr .. ":" .. self.lport] = nil
  end
  self._st = "closed"
  if st == "server" then
    log("close", where(self), { addr = self.laddr, port = self.lport })
    for _, c in ipairs(self._pending) do
      local p = c._peer
      if p and p._st == "client" then
        p._reset = RESET
        both_wake(p)
      end
    end
    self._pending = {}
  elseif st == "client" then
    log("close", where(self) .. " -> " .. label(self.paddr, self.pport), { addr = self.laddr, port = self.lport })
    local p = self._peer
    if s and p and not self._reset and not net.down(self.laddr, p.laddr) then
      net.at(net.transit(self._dir, self._link, 0, true), fin, p)
    end
  end
  self._rbuf = ""
  if core.close_wakes() then both_wake(self) end
  return 1
end

--- shutdown(how): "send" or "both" (the default) sends the close to the
--- peer; "receive" does nothing to the peer. 1.
function m:shutdown(how)
  if self._st == "client" and how ~= "receive" and not self._shut then
    self._shut = true
    local p = self._peer
    if p then net.at(net.transit(self._dir, self._link, 0, true), fin, p) end
  end
  return 1
end

--- reset(err): this connection is cut (sim.cut): both ends fail.
function m:_cut()
  local p = self._peer
  for _, e in ipairs({ self, p }) do
    if e and e._st == "client" and not e._reset then
      e._reset = RESET
      log("reset", where(e) .. " -> " .. label(e.paddr, e.pport), { addr = e.laddr, port = e.lport })
      both_wake(e)
    end
  end
end

--- class(): the socket's class (shadowed by the class field).
function m.class(self) return self.class end

--- TLS over a simulated socket: cosock.ssl.wrap calls this (cosock.sim.tls).
function m._sim_tls(self, config)
  return require("cosock.sim.tls").wrap(self, config)
end

sock.check_self(m, mt, "simulated tcp socket")
return m
