--- cosock.sim.sock: what the simulated tcp and udp sockets of cosock.sim share:
--- the waker protocol (so the loop, select and every cosock wait work on them
--- unchanged), the wait with cosock's timeout rules, settimeout, options and
--- the LuaSocket methods that have nothing to simulate.

local core = require "cosock.core"
local wrap = require "cosock.socket.wrap"
local net = require "cosock.sim.net"

local yield, monotime, luasocket_timeouts = core.yield, core.monotime, core.luasocket_timeouts
local error, min, pairs, ipairs, type, getmetatable = error, math.min, pairs, ipairs, type, getmetatable

local M = {}

--- methods(ready) -> a method table with the shared methods; ready(self, kind)
--- says whether a call of that kind would make progress now.
function M.methods(ready)
  local m = {}

  --- setwaker(kind, fn): the waker protocol. A second waker for a kind while
  --- one is set fails with cosock's words; a socket ready now calls fn at once.
  function m.setwaker(self, kind, fn)
    if kind ~= "recvr" and kind ~= "sendr" then
      error("bad argument #1 to 'setwaker' (\"recvr\" or \"sendr\" expected)", 2)
    end
    local f = kind == "recvr" and "_w_recvr" or "_w_sendr"
    if fn == nil then
      self[f] = nil
      return
    end
    if self[f] then
      error(kind .. " waker already set, sockets can only block one thread per waker kind", 2)
    end
    if ready(self, kind) then return fn() end
    self[f] = fn
  end

  --- settimeout(t, mode): as the real wrappers' (cosock.socket.wrap).
  m.settimeout = wrap.settimeout

  function m.setoption(self, name, value)
    if type(name) ~= "string" then
      error("bad argument #1 to 'setoption' (string expected, got " .. type(name) .. ")", 2)
    end
    self._opts = self._opts or {}
    self._opts[name] = value
    return 1
  end

  function m.getoption(self, name)
    local o = self._opts
    if o and o[name] ~= nil then return o[name] end
    return false
  end

  function m.getsockname(self)
    return self.laddr or "0.0.0.0", self.lport or 0, "inet"
  end

  function m.getpeername(self)
    if not self.paddr then return nil, "getpeername failed" end
    return self.paddr, self.pport, "inet"
  end

  function m.getfamily() return "inet" end
  --- getfd(): -1, there is no descriptor (setfd does nothing).
  function m.getfd() return -1 end
  function m.setfd() end
  function m.getstats(self)
    return self._received or 0, self._sent or 0, monotime() - self._born
  end
  function m.setstats(self, r, s)
    self._received, self._sent = r, s
    return 1
  end
  return m
end

--- check_self(m, mt, what [, skip]): every public method of m (not
--- "_"-prefixed, not class, not a name in the set skip) first checks that it was called on an object of metatable mt:
--- a dot-call (sock.receive()) raises "bad self to 'receive' (<what>
--- expected, got <type>)" instead of an index error inside. Run once per
--- module, when it loads.
function M.check_self(m, mt, what, skip)
  local names = {}
  for name, f in pairs(m) do
    if type(f) == "function" and name:sub(1, 1) ~= "_" and name ~= "class" and not (skip and skip[name]) then
      names[#names + 1] = name
    end
  end
  for _, name in ipairs(names) do
    local f = m[name]
    m[name] = function(self, ...)
      if getmetatable(self) ~= mt then
        error(("bad self to '%s' (%s expected, got %s)"):format(name, what,
          self == nil and "no value" or type(self)), 2)
      end
      return f(self, ...)
    end
  end
  return m
end

--- init(self): the fields every simulated socket starts with.
function M.init(self)
  local st = net.state()
  st.nsock = st.nsock + 1
  self._id = st.nsock
  self._born = monotime()
  self._self = { self }
  return self
end

--- wait(self, kind, deadline, what) -> true, deadline | nil: waits until the socket
--- may be ready for kind, as the real wrappers do (cosock.socket.wrap.wait):
--- self.timeout limits each wait, self.total the whole call; 0 or negative
--- times out on the next pass (at once with set_luasocket_timeouts(true)).
--- deadline: nil on a call's first wait, then what the last wait returned.
--- nil back: timed out (the record notes it, with `what`).
function M.wait(self, kind, deadline, what)
  local t = self.timeout
  if self.total then
    deadline = deadline or monotime() + self.total
    local left = deadline - monotime()
    t = t and min(t, left) or left
  end
  if t and t <= 0 and luasocket_timeouts() then return M.timed_out(self, what) end
  local recvt, sendt
  if kind == "recvr" then recvt = self._self else sendt = self._self end
  local tw = core.trace_wait -- (a trace's label for this wait, as a real socket's; nil while none is on)
  if tw then tw(recvt and "recv" or "send", "sim " .. net.label(self.laddr, self.lport)) end
  local _, _, err = yield(recvt, sendt, t)
  if err == "timeout" then return M.timed_out(self, what) end
  return true, deadline
end

function M.timed_out(self, what)
  net.log("timeout", net.label(self.laddr, self.lport) .. " " .. what,
    { op = what, addr = self.laddr, port = self.lport })
  return nil
end

return M
