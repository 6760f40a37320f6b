--- cosock.sim.net: the in-memory network of cosock.sim (doc/simulation.md):
--- simulated host names, links between addresses (latency, jitter, bandwidth,
--- loss, segment, sndbuf, down), black holes, the ports in use, the queue of
--- deliveries on the virtual clock, and the record of what happened.
---
--- Deliveries wait in a queue ordered by (time, order of scheduling); one
--- cosock.timer object stands for its head, so the loop's virtual clock jumps
--- to the next delivery as it jumps to any deadline, and a pending delivery
--- keeps a waiting task from being reported as stalled.

local core = require "cosock.core"
core.open "timer" -- (its C functions: added to cosock.core on first use)
core.open "sim"
local monotime, draw, timer_oneshot = core.monotime, core.sim_draw, core.timer_oneshot
local type, tostring, error, setmetatable, pairs = type, tostring, error, setmetatable, pairs
local max, format = math.max, string.format

local N = {}

local S -- the state of the simulation that is on (nil while off)

local LINK_DEFAULTS = {
  latency = 0, jitter = 0, bandwidth = nil, loss = 0, segment = nil, sndbuf = 65536, down = false,
}
local LINK_FIELDS = {
  latency = "number", jitter = "number", bandwidth = "number", loss = "number",
  segment = "number", sndbuf = "number", down = "boolean",
}

--- check_link(fname, opts) -> a link table: opts checked (known fields, types, ranges).
function N.check_link(fname, opts, defaults)
  if type(opts) ~= "table" then
    error(format("bad argument to '%s' (link options table expected, got %s)", fname, type(opts)), 3)
  end
  local l = setmetatable({}, { __index = defaults or LINK_DEFAULTS })
  for k, v in pairs(opts) do
    local want = LINK_FIELDS[k]
    if want == nil then error(format("%s: unknown link option '%s'", fname, tostring(k)), 3) end
    if type(v) ~= want then
      error(format("%s: link option '%s' must be a %s (got %s)", fname, k, want, type(v)), 3)
    end
    if want == "number" and (v ~= v or v < 0 or v == math.huge or (k == "loss" and v > 1)
        or ((k == "bandwidth" or k == "segment" or k == "sndbuf") and v <= 0)) then
      error(format("%s: link option '%s' out of range (got %s)", fname, k, tostring(v)), 3)
    end
    if (k == "segment" or k == "sndbuf") and v % 1 ~= 0 then -- (byte counts)
      error(format("%s: link option '%s' must be an integer (got %s)", fname, k, tostring(v)), 3)
    end
    l[k] = v
  end
  return l
end

function N.start(opts)
  S = {
    t0 = opts.clock, epoch = opts.epoch, address = opts.address,
    defaults = opts.link or setmetatable({}, { __index = LINK_DEFAULTS }),
    hosts = { localhost = "127.0.0.1" }, names = { "localhost" }, links = {}, holes = {},
    bound = {},          -- "addr:port" -> tcp socket bound or listening there
    udp = {}, udplist = {}, -- "addr:port" -> udp socket; every bound udp socket in bind order
    conns = {},          -- connected tcp endpoint pairs, oldest first
    nextport = 49152, queue = {}, seq = 0, timer = nil, armed = nil,
    record = opts.record and {} or nil, nsock = 0,
  }
end

function N.stop()
  if S and S.timer then S.timer:cancel() end
  S = nil
end

function N.state() return S end

---------------------------------------------------------------------------
-- The record
---------------------------------------------------------------------------

--- log(event, text, fields): adds {t, event, text, ...fields} to the record.
function N.log(event, text, fields)
  local rec = S and S.record
  if not rec then return end
  local e = fields or {}
  e.t, e.event, e.text = monotime() - S.t0, event, text
  rec[#rec + 1] = e
end

function N.line(e) return format("%.6f %-9s %s", e.t, e.event, e.text) end

---------------------------------------------------------------------------
-- The delivery queue (a binary heap on (at, seq))
---------------------------------------------------------------------------

local function before(a, b) return a.at < b.at or (a.at == b.at and a.seq < b.seq) end

local function push(q, e)
  local i = #q + 1
  q[i] = e
  while i > 1 do
    local p = (i - i % 2) / 2
    if not before(q[i], q[p]) then break end
    q[i], q[p] = q[p], q[i]
    i = p
  end
end

local function pop(q)
  local top, n = q[1], #q
  q[1] = q[n]
  q[n] = nil
  n = n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and before(q[l], q[m]) then m = l end
    if r <= n and before(q[r], q[m]) then m = r end
    if m == i then break end
    q[i], q[m] = q[m], q[i]
    i = m
  end
  return top
end

local arm
-- The timer's waker: every delivery due now, then the timer for the next.
local function run_due(st)
  if S ~= st then return end
  st.timer, st.armed = nil, nil
  local q, now = st.queue, monotime()
  -- (1e-9: the timer's deadline went through a subtraction and an addition)
  while q[1] and q[1].at <= now + 1e-9 and S == st do
    local e = pop(q)
    e.fn(e.a, e.b, e.c)
  end
  if S == st then arm(st) end
end

arm = function(st)
  local head = st.queue[1]
  if head == nil or (st.armed and st.armed <= head.at) then return end
  if st.timer then st.timer:cancel() end
  local t = timer_oneshot(max(head.at - monotime(), 0))
  t:setwaker("recvr", function() run_due(st) end)
  st.timer, st.armed = t, head.at
end

--- at(when, fn, a, b, c): fn(a, b, c) at virtual time `when` (not before the
--- next pass); calls scheduled for the same time run in the order scheduled.
function N.at(when, fn, a, b, c)
  S.seq = S.seq + 1
  push(S.queue, { at = max(when, monotime()), seq = S.seq, fn = fn, a = a, b = b, c = c })
  arm(S)
end

---------------------------------------------------------------------------
-- Names, addresses, links
---------------------------------------------------------------------------

local function numeric(host)
  return host:find("^%d+%.%d+%.%d+%.%d+$") ~= nil or host:find(":", 1, true) ~= nil
end

--- resolve(host) -> address | nil, "host not found". Raises for a name the
--- test did not declare (sim.host): the simulation cannot look it up.
function N.resolve(host, level)
  if type(host) ~= "string" then
    error(format("cosock.sim: host must be a string (got %s)", type(host)), (level or 1) + 1)
  end
  if host == "*" then return "0.0.0.0" end
  if numeric(host) then return host end
  local addr = S.hosts[host]
  if addr == nil then
    error(format("cosock.sim: no simulated host named '%s' (declare it with sim.host('%s', address))",
      host, host), (level or 1) + 1)
  end
  if addr == false then return nil, "host not found" end
  return addr
end

function N.is_numeric(host) return numeric(host) end

-- The link between addresses a and b: the pair's, else a's or b's, else the defaults.
function N.link(a, b)
  local L = S.links
  return L[a .. "|" .. b] or L[b .. "|" .. a] or L[a .. "|*"] or L[b .. "|*"] or S.defaults
end

function N.set_link(a, b, l)
  if a == "*" then a, b = b, a end -- ("*" second, where N.link looks for it)
  S.links[a .. "|" .. b] = l
end

--- down(a, b): nothing passes between a and b (a black hole or a link down).
function N.down(a, b, l)
  return S.holes[a] or S.holes[b] or (l or N.link(a, b)).down
end

--- transit(dir, l, n) -> the time n bytes sent now over link l arrive. dir
--- keeps one direction's transmitter (bandwidth) and, when ordered, its last
--- arrival: a stream's bytes never overtake each other.
function N.transit(dir, l, n, ordered)
  local now = monotime()
  local start = max(now, dir.tx_free or now)
  local tx = l.bandwidth and n / l.bandwidth or 0
  dir.tx_free = start + tx
  local at = start + tx + l.latency
  if l.jitter > 0 then at = at + draw() * l.jitter end
  if ordered then
    if dir.last_at and at < dir.last_at then at = dir.last_at end
    dir.last_at = at
  end
  return at
end

function N.draw() return draw() end

--- port(p) -> p as a port number (an integer 0 to 65535, or a string of
--- one), or nil: the sockets then fail as LuaSocket's lookup of a bad
--- service does (a port of 1.5 or NaN is no port).
function N.port(p)
  local n = tonumber(p)
  if n and n % 1 == 0 and n >= 0 and n <= 65535 then return n end
  return nil
end

--- count(fname, n, v) -> the byte count v (a number >= 0; a fraction is
--- cut, as LuaSocket casts it), or raises "bad argument #n to 'fname'".
function N.count(fname, n, v)
  if type(v) ~= "number" or v ~= v or v < 0 then
    error(format("bad argument #%d to '%s' (byte count >= 0 expected, got %s)", n, fname,
      type(v) ~= "number" and type(v) or v ~= v and "NaN" or tostring(v)), 3)
  end
  return N.whole(v)
end

--- whole(v) -> v >= 0 without its fraction (at most 2^53: math.huge and
--- counts past what a string can hold wait for the end of the stream).
function N.whole(v)
  if v >= 2 ^ 53 then return 2 ^ 53 end
  return v - v % 1
end

function N.ephemeral()
  local p = S.nextport
  S.nextport = p < 65535 and p + 1 or 49152
  return p
end

--- label(sock) -> "addr:port" of its local end (for the record).
function N.label(addr, port) return (addr or "0.0.0.0") .. ":" .. tostring(port or 0) end

--- wake(sock, kind): calls and clears the waker the loop gave sock for kind.
function N.wake(sock, kind)
  local f = kind == "recvr" and "_w_recvr" or "_w_sendr"
  local w = sock[f]
  if w then
    sock[f] = nil
    local tw = core.trace_wake -- (a trace's wake cause: readiness, as a real socket's; nil while none is on)
    if tw then tw("ready") end
    w()
    if tw then tw(nil) end
  end
end

return N
