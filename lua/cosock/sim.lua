--- cosock.sim: deterministic simulation (doc/simulation.md). Turned on before
--- the program spawns anything, the same program runs on a virtual clock
--- (sleep, timeouts, cosock.timer, socket.gettime, os.time, the monotonic clock; when
--- no task is ready time jumps to the next deadline), over an in-memory
--- network (cosock.socket.tcp/udp, TLS as a pass-through, simulated names),
--- with a seeded order for tasks that become ready together, and keeps a
--- record of what happened. Nothing touches a real socket while it is on.
---
--- The loop's side is src/features/sim.c; the network is lua/cosock/sim/*.lua. This
--- file is the public API and the switch: it points cosock.socket's
--- constructors, cosock.dns and gettime at the simulation, and back.

local core = require "cosock.core"
core.open "sim" -- (its C functions: added to cosock.core on first use)
local net = require "cosock.sim.net"
local socket = require "cosock.socket"
local dns = require "cosock.dns"
local luasocket = require "socket"

local type, error, tostring, format, monotime = type, error, tostring, string.format, core.monotime
local getmetatable, ipairs, pairs, concat, huge = getmetatable, ipairs, pairs, table.concat, math.huge

local sim = {}

-- Argument checks, raising at the caller of the public function with
-- "bad argument #n to 'cosock.sim.<fname>' (<what> expected, got <value>)".
local function got(v)
  if v == nil then return "nil" end
  if type(v) == "number" then
    if v ~= v then return "NaN" end
    return tostring(v)
  end
  if type(v) == "string" then return format("%q", v) end
  return type(v)
end

local function bad(n, fname, what, v)
  error(format("bad argument #%d to 'cosock.sim.%s' (%s expected, got %s)", n, fname, what, got(v)), 3)
end

local function is_int(v) return type(v) == "number" and v % 1 == 0 and v > -2^53 and v < 2^53 end

local saved -- what on() replaced, for off(); nil while off

-- The replacements, each behind a check that the loop still simulates
-- (cosock.reset() turns the simulation off in C: then they put the real
-- functions back and call them).
local restore
local function guard(fn, name)
  return function(...)
    if not core.sim_active() then
      local real = saved and saved[name]
      restore()
      return real(...)
    end
    return fn(...)
  end
end

local function gettime()
  local st = net.state()
  return st.epoch + (monotime() - st.t0)
end

-- os.time() and os.date(fmt) read the virtual clock too (drivers time their
-- keep-alives with them); with a time or a table they are the real ones.
local function os_time(t)
  if t ~= nil then return saved.os_time(t) end
  local now = gettime()
  return now - now % 1
end

local function os_date(fmt, t)
  if t == nil then t = os_time() end
  return saved.os_date(fmt, t)
end

-- The first simulated name of address addr (in the order declared), or addr.
local function name_of(addr)
  local st = net.state()
  for _, name in ipairs(st.names) do
    if st.hosts[name] == addr then return name end
  end
  return addr
end

-- cosock.socket.dns's lookups, answered from sim.host.
local function lookup(fname)
  return function(host, serv)
    local addr, err = net.resolve(host, 3)
    if not addr then return nil, err end
    local name = net.is_numeric(host) and name_of(addr) or host
    if fname == "toip" then return addr, { name = name, alias = {}, ip = { addr } } end
    if fname == "tohostname" then return name, { name = name, alias = {}, ip = { addr } } end
    if fname == "getnameinfo" then
      if serv ~= nil then return { name_of(addr) }, tostring(serv) end
      return { name_of(addr) }
    end
    return { { family = "inet", addr = addr } }
  end
end

local LOOKUPS = { "toip", "tohostname", "getaddrinfo", "getnameinfo" }

local function patch()
  local tcp, udp = require "cosock.sim.tcp", require "cosock.sim.udp"
  local tcp_mt, udp_mt = getmetatable(socket.tcp), getmetatable(socket.udp)
  saved = {
    tcp_call = tcp_mt.__call, udp_call = udp_mt.__call,
    tcp4 = socket.tcp4, tcp6 = socket.tcp6, udp4 = socket.udp4, udp6 = socket.udp6,
    gettime = socket.gettime, ls_gettime = luasocket.gettime,
    toip = dns.toip, tohostname = dns.tohostname, getaddrinfo = dns.getaddrinfo,
    getnameinfo = dns.getnameinfo, os_time = os.time, os_date = os.date,
  }
  tcp_mt.__call = guard(function() return tcp._new() end, "tcp_call")
  udp_mt.__call = guard(function() return udp._new() end, "udp_call")
  socket.tcp4 = guard(tcp._new, "tcp4")
  socket.tcp6 = guard(tcp._new, "tcp6")
  socket.udp4 = guard(udp._new, "udp4")
  socket.udp6 = guard(udp._new, "udp6")
  socket.gettime = guard(gettime, "gettime")
  luasocket.gettime = guard(gettime, "ls_gettime")
  os.time, os.date = guard(os_time, "os_time"), guard(os_date, "os_date")
  for _, f in ipairs(LOOKUPS) do dns[f] = guard(lookup(f), f) end
end

restore = function()
  if saved == nil then return end
  local s = saved
  saved = nil
  getmetatable(socket.tcp).__call, getmetatable(socket.udp).__call = s.tcp_call, s.udp_call
  socket.tcp4, socket.tcp6, socket.udp4, socket.udp6 = s.tcp4, s.tcp6, s.udp4, s.udp6
  socket.gettime, luasocket.gettime = s.gettime, s.ls_gettime
  os.time, os.date = s.os_time, s.os_date
  for _, f in ipairs(LOOKUPS) do dns[f] = s[f] end
  net.stop()
end

-- The C side tells the record of each resume.
local function note(name, slot, how)
  local label = (type(name) == "string" or type(name) == "number") and tostring(name)
    or ("task#" .. slot)
  net.log(how, label, { task = label })
end

local ON_FIELDS = { seed = true, clock = true, epoch = true, address = true, link = true, record = true }

--- on(opts): turns the simulation on. opts (all optional): seed (an integer:
--- tasks that become ready together run in an order drawn from it; without
--- one, in the order they became ready), clock (the monotonic clock's start,
--- 100000), epoch (socket.gettime() at the start, 1700000000), address (this
--- program's address, "10.0.0.1"), link (the default link options, see
--- sim.link), record (false: keep no record). Raises when tasks were spawned
--- (on() again while on first ends the simulation that is on, and its tasks).
-- Calls the loop's f (reset, sim_on, sim_off); its error (the loop runs, a
-- task is live) is raised as fname's, at the caller of sim.on or sim.off
-- (it named cosock.reset, at a line of this file).
local function loop_call(fname, f, ...)
  local ok, err = pcall(f, ...)
  if not ok then
    err = tostring(err):gsub("^[^\n]-:%d+: ", "")
      :gsub("^cosock%.reset: cannot reset while the loop is running", "cosock.reset: cannot be called while the loop runs")
      :gsub("^cosock%.reset:", fname .. ":")
    error(err, 3)
  end
end

function sim.on(opts)
  if opts == nil then opts = {} end
  if type(opts) ~= "table" then
    error("bad argument #1 to 'on' (table or nil expected, got " .. type(opts) .. ")", 2)
  end
  for k in pairs(opts) do
    if not ON_FIELDS[k] then error(format("cosock.sim.on: unknown option '%s'", tostring(k)), 2) end
  end
  local seed = opts.seed
  if seed ~= nil and not is_int(seed) then
    error("cosock.sim.on: seed must be an integer (got " .. got(seed) .. ")", 2)
  end
  local clock, epoch = opts.clock or 100000, opts.epoch or 1700000000
  -- (bounded: at 1e17 a second is below a double's step there, and the
  -- virtual clock, gettime and os.time() stood still; within these bounds
  -- the clock's step is below a microsecond, gettime's below 20 us)
  for name, v in pairs({ clock = clock, epoch = epoch }) do
    local limit = name == "clock" and 1e9 or 1e11
    if type(v) ~= "number" or v ~= v or v > limit or v < -limit then
      error(format("cosock.sim.on: %s must be a finite number from -%s to %s (got %s)", name,
        name == "clock" and "1e9" or "1e11", name == "clock" and "1e9" or "1e11", got(v)), 2)
    end
  end
  if opts.record ~= nil and type(opts.record) ~= "boolean" then
    error("cosock.sim.on: record must be a boolean (got " .. got(opts.record) .. ")", 2)
  end
  local address = opts.address or "10.0.0.1"
  if type(address) ~= "string" or not net.is_numeric(address) then
    error("cosock.sim.on: address must be a numeric address (got " .. tostring(address) .. ")", 2)
  end
  local link = opts.link and net.check_link("cosock.sim.on", opts.link)
  if core.sim_active() then
    if core.stats().tasks > 0 then loop_call("cosock.sim.on", core.reset) end
    loop_call("cosock.sim.on", core.sim_off)
    restore()
  end
  if saved then restore() end
  loop_call("cosock.sim.on", core.sim_on, clock, seed, opts.record ~= false and note or nil)
  net.start({ clock = clock, epoch = epoch, address = address, link = link, record = opts.record ~= false })
  patch()
end

--- off(): back to the real clock and real sockets. Tasks still live (a run
--- that raised) are dropped first (cosock.reset()): their deadlines are on
--- the virtual clock. Does nothing while off.
function sim.off()
  if core.sim_active() and core.stats().tasks > 0 then loop_call("cosock.sim.off", core.reset) end
  loop_call("cosock.sim.off", core.sim_off)
  restore()
end

--- active() -> whether the simulation is on.
function sim.active()
  return core.sim_active() and saved ~= nil
end

local function need_on(fname)
  if not sim.active() then error("cosock.sim." .. fname .. ": the simulation is off (sim.on first)", 3) end
  return net.state()
end

--- host(name, address): lookups of name give address (a numeric address);
--- false: lookups of name fail with "host not found".
function sim.host(name, address)
  local st = need_on("host")
  if type(name) ~= "string" then bad(1, "host", "string", name) end
  if address ~= false and (type(address) ~= "string" or not net.is_numeric(address)) then
    bad(2, "host", "numeric address or false", address)
  end
  if st.hosts[name] == nil then st.names[#st.names + 1] = name end
  st.hosts[name] = address
end

--- link(a, b, opts): the link between addresses a and b (either may be "*":
--- every link of the other): latency and jitter (seconds), bandwidth
--- (bytes/s), loss (0..1, udp), segment (bytes per delivery: partial
--- reads), sndbuf (bytes in flight before a send waits: partial writes),
--- down (true: nothing passes). Applies to what is sent from now on.
function sim.link(a, b, opts)
  local st = need_on("link")
  if type(a) ~= "string" then bad(1, "link", "address", a) end
  if type(b) ~= "string" then bad(2, "link", "address", b) end
  net.set_link(a, b, net.check_link("cosock.sim.link", opts, st.defaults))
end

--- blackhole(address, on): while on (the default), everything sent to or
--- from address vanishes: connects time out, data never arrives.
function sim.blackhole(address, on)
  local st = need_on("blackhole")
  if type(address) ~= "string" then bad(1, "blackhole", "address", address) end
  if on ~= nil and type(on) ~= "boolean" then bad(2, "blackhole", "boolean or nil", on) end
  st.holes[address] = on ~= false or nil
  net.log("blackhole", address .. (on ~= false and " on" or " off"), { addr = address })
end

--- cut(address, port): resets every connection with an end at address
--- (and port, when given): both ends fail with "connection reset by peer".
--- Returns how many were cut.
function sim.cut(address, port)
  local st = need_on("cut")
  if type(address) ~= "string" then bad(1, "cut", "address", address) end
  if port ~= nil and not (is_int(port) and port >= 0 and port <= 65535) then
    bad(2, "cut", "port (an integer 0 to 65535) or nil", port)
  end
  local n, keep = 0, {}
  for _, c in ipairs(st.conns) do
    local p = c._peer
    local live = c._st == "client" and not c._reset
    if live and ((c.laddr == address and (port == nil or c.lport == port))
        or (c.paddr == address and (port == nil or c.pport == port))) then
      c:_cut()
      n = n + 1
    elseif live or (p and p._st == "client" and not p._reset) then
      keep[#keep + 1] = c
    end
  end
  st.conns = keep
  return n
end

--- now() -> virtual seconds since on().
function sim.now()
  return monotime() - need_on("now").t0
end

--- log(text): adds the test's own line to the record (event "note").
function sim.log(text)
  need_on("log")
  net.log("note", tostring(text))
end

--- record() -> the list of events so far: {t, event, text, ...}; t in
--- virtual seconds since on(). event: "start", "wake", "timeout" (a task
--- resumed, and why), "connect", "connected", "refused", "listen", "accept",
--- "send", "sendto", "lost", "fin", "close", "reset", "tls", "blackhole",
--- "note"; "timeout" also for a socket call's wait (field op).
function sim.record()
  local st = net.state()
  return st and st.record or {}
end

--- transcript([filter]) -> the record as text, a line per event; filter: a
--- set of event names to keep ({connect = true, ...}) or nil for all.
function sim.transcript(filter)
  if filter ~= nil and type(filter) ~= "table" then bad(1, "transcript", "table or nil", filter) end
  local lines = {}
  for _, e in ipairs(sim.record()) do
    if filter == nil or filter[e.event] then lines[#lines + 1] = net.line(e) end
  end
  return concat(lines, "\n")
end

--- explore(seeds, fn [, opts]) -> nil | seed, err, transcript: for seed =
--- 1 .. seeds (math.huge: until one fails; or each seed of a list), a fresh
--- simulation with that seed (and opts) runs fn(seed) (which spawns and
--- runs); the first seed for which fn raises is returned, with the error and
--- that run's transcript. The simulation is off afterwards. The seeds are
--- counted, never listed: memory does not grow with the count.
function sim.explore(seeds, fn, opts)
  local n
  if type(seeds) == "number" then
    if not (seeds == huge or (is_int(seeds) and seeds >= 0)) then
      bad(1, "explore", "count (an integer >= 0 or math.huge) or list of seeds", seeds)
    end
    n = seeds
  elseif type(seeds) == "table" then
    for i, seed in ipairs(seeds) do
      if not is_int(seed) then bad(1, "explore", format("integer seed at [%d]", i), seed) end
    end
  else
    bad(1, "explore", "count or list of seeds", seeds)
  end
  if type(fn) ~= "function" then bad(2, "explore", "function", fn) end
  if opts ~= nil then
    if type(opts) ~= "table" then bad(3, "explore", "table of sim.on options or nil", opts) end
    for k in pairs(opts) do
      if not ON_FIELDS[k] or k == "seed" then
        error(format("bad argument #3 to 'cosock.sim.explore' (%s option '%s')",
          k == "seed" and "explore sets the seed itself: no" or "unknown", tostring(k)), 2)
      end
    end
  end
  local i = 0
  while true do
    i = i + 1
    local seed
    if n then
      if i > n then return nil end
      seed = i
    else
      seed = seeds[i]
      if seed == nil then return nil end
    end
    local o = {}
    for k, v in pairs(opts or {}) do o[k] = v end
    o.seed = seed
    local on_ok, on_err = pcall(sim.on, o)
    if not on_ok then -- (as explore's: an option's value, or the loop's state)
      on_err = tostring(on_err):gsub("^[^\n]-:%d+: ", ""):gsub("^cosock%.sim%.on: ", "")
      if on_err:find("while the loop runs", 1, true) or on_err:find("already spawned", 1, true) then
        error("cosock.sim.explore: " .. on_err, 2)
      end
      error("bad argument #3 to 'cosock.sim.explore' (" .. on_err .. ")", 2)
    end
    local ok, err = pcall(fn, seed)
    local text = sim.transcript()
    sim.off()
    if not ok then return seed, err, text end
  end
end

return sim
