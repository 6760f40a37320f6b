--- cosock.sim.tls: TLS over simulated sockets. LuaSec runs only over real
--- descriptors, so cosock.ssl.wrap of a simulated tcp socket returns this
--- pass-through instead (doc/simulation.md, "TLS"): the handshake completes
--- at once (the record notes it), bytes pass in clear, no certificate is
--- checked. Waits that time out report "wantread"/"wantwrite", as the real
--- tls wrappers do (cosock's quirk).

local net = require "cosock.sim.net"

local setmetatable = setmetatable

local t = {}
local mt = { __index = t, __tostring = function(s) return "tls{}: " .. tostring(s._tcp) end }

--- wrap(tcp, config) -> a "tls{}" object over the simulated tcp socket.
function t.wrap(tcp, config)
  if type(config) ~= "table" and type(config) ~= "userdata" then
    error("bad argument #2 to 'wrap' (table expected, got " .. type(config) .. ")", 3)
  end
  return setmetatable({ _tcp = tcp, class = "tls{}", _config = config }, mt)
end

--- dohandshake(): true (nil, "closed" on a closed socket).
function t:dohandshake()
  local s = self._tcp
  if s._st ~= "client" then return nil, "closed" end
  net.log("tls", net.label(s.laddr, s.lport) .. " handshake with " .. net.label(s.paddr, s.pport),
    { addr = s.laddr, port = s.lport })
  return true
end

local WANT = { receive = "wantread", send = "wantwrite" }
local function settle(what, a, err, c)
  if err == "timeout" then err = WANT[what] end
  return a, err, c
end

function t:receive(pattern, prefix) return settle("receive", self._tcp:receive(pattern, prefix)) end
function t:send(data, i, j) return settle("send", self._tcp:send(data, i, j)) end
function t:settimeout(v, mode) self._tcp:settimeout(v, mode) end
function t:close() return self._tcp:close() end
function t:setwaker(kind, fn) return self._tcp:setwaker(kind, fn) end
function t:dirty() return self._tcp:dirty() end
function t:getfd() return -1 end
function t:getpeername() return self._tcp:getpeername() end
function t:getsockname() return self._tcp:getsockname() end
function t:getstats() return self._tcp:getstats() end
function t:sni() return true end
function t:setalpn() return true end
function t:getalpn() return nil end
function t:want() return "nothing" end
--- getpeercertificate(): nil, there is no certificate in the simulation.
function t:getpeercertificate() return nil end
function t:getpeerchain() return nil end
function t:getpeerverification() return true end
function t.class() return "tls{}" end

require("cosock.sim.sock").check_self(t, mt, "simulated tls socket", { wrap = true })
return t
