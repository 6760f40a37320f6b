-- spec/support/dns_server.lua: a small DNS server on 127.0.0.1 for the
-- resolver's specs and bench: UDP and TCP on one port, answers from a table,
-- and the misbehaviour a resolver must survive.
--
--   local dns_server = require "spec.support.dns_server"
--   local srv = dns_server.start(zone)   -- in a task: spawns the server's tasks
--   cosock.socket.dns.setservers { srv.address }
--   ...
--   srv:stop()                           -- closes its sockets, cancels its tasks
--
-- zone[name] (lower case, no final dot) says how to answer a query for name:
--   a = {"127.0.0.1", ...}, aaaa = {"::1", ...}, ptr = "name"   the records
--                      (a name with no record of the type asked: NOERROR, no
--                      answer, which resolvers call NODATA)
--   rcode = "nxdomain" | "servfail" | "refused" | "formerr"   fail that way
--   delay = s          answer s seconds later (other queries go on meanwhile)
--   hold = true        answer only once srv:release(name) is called
--   drop = true        never answer
--   tc = true          over UDP answer with the TC bit and no records (the
--                      resolver then asks again over TCP, which answers fully)
--   garbage = "short" | "id" | "body"   answer with junk: 5 bytes; a whole
--                      answer with another id; the right id and question
--                      with an answer record cut short
-- A name not in the zone gets NXDOMAIN. Only 127.0.0.1 and ::1 appear in the
-- specs' records.
--
-- What it saw: srv.queries (count), srv.log (list of {name=, type=, proto=
-- "udp"|"tcp"}), srv.answered (answers sent), srv:count(name).
--
-- The codec (D.parse_query, D.answer) is plain Lua (its own big-endian
-- encoders, since string.pack is 5.3+), usable outside cosock
-- (bench/dns_server.lua runs it in a separate process).

local D = {}

local TYPES = { [1] = "A", [28] = "AAAA", [12] = "PTR" }
local RCODES = { nxdomain = 3, servfail = 2, refused = 5, formerr = 1 }

-- ---------------------------------------------------------------------------
-- big-endian integers, on every Lua (string.pack is 5.3+): the formats used
-- here, I2, I4 and s2 (a string after its I2 length).

local floor, char, byte = math.floor, string.char, string.byte

local function u16(n)
  assert(n >= 0 and n < 65536 and n == floor(n), "I2 out of range")
  return char(floor(n / 256), n % 256)
end

local function u32(n)
  assert(n >= 0 and n < 4294967296 and n == floor(n), "I4 out of range")
  return u16(floor(n / 65536)) .. u16(n % 65536)
end

--- The I2 at pos (default 1) of s, or an error if s is too short there.
local function get_u16(s, pos)
  pos = pos or 1
  local hi, lo = byte(s, pos, pos + 1)
  assert(lo, "data string too short")
  return hi * 256 + lo
end

local function s2(str)
  return u16(#str) .. str
end

--- The RD bit (0x0100) of flags, as that bit's value (0 or 0x0100).
local function rd_bit(flags)
  return floor(flags / 0x0100) % 2 * 0x0100
end

D.u16, D.u32, D.get_u16, D.s2 = u16, u32, get_u16, s2

-- ---------------------------------------------------------------------------
-- the wire format (RFC 1035)

--- parse_query(msg) -> {id, rd, name, qtype, question} or nil: the first
--- question of a query (name in lower case, without the final dot; question:
--- the raw bytes of the question section, for the answer).
function D.parse_query(msg)
  if #msg < 12 then return nil end
  local id, flags, qd = get_u16(msg, 1), get_u16(msg, 3), get_u16(msg, 5)
  if qd < 1 then return nil end
  local pos, labels = 13, {}
  while true do
    local len = msg:byte(pos)
    if len == nil or len >= 64 then return nil end
    pos = pos + 1
    if len == 0 then break end
    labels[#labels + 1] = msg:sub(pos, pos + len - 1)
    pos = pos + len
  end
  if #msg < pos + 3 then return nil end
  local qtype = get_u16(msg, pos)
  return {
    id = id, rd = rd_bit(flags), name = table.concat(labels, "."):lower(), qtype = qtype,
    question = msg:sub(13, pos + 3),
  }
end

local function encode_name(name)
  local out = {}
  for label in name:gmatch("[^.]+") do out[#out + 1] = string.char(#label) .. label end
  return table.concat(out) .. "\0"
end

--- The 16 bytes of a textual IPv6 address (with at most one "::").
local function ipv6_bytes(text)
  local head, tail = text:match("^(.-)::(.*)$")
  local function groups(s)
    local g = {}
    for h in s:gmatch("[^:]+") do g[#g + 1] = tonumber(h, 16) end
    return g
  end
  local g
  if head then
    local a, b = groups(head), groups(tail)
    g = a
    for _ = 1, 8 - #a - #b do g[#g + 1] = 0 end
    for _, v in ipairs(b) do g[#g + 1] = v end
  else
    g = groups(text)
  end
  local out = {}
  for i = 1, 8 do out[i] = u16(g[i]) end
  return table.concat(out)
end

local function ipv4_bytes(text)
  local a, b, c, d = text:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  return string.char(tonumber(a), tonumber(b), tonumber(c), tonumber(d))
end

--- answer(q, rule, proto) -> message: the answer to the parsed query q by
--- the zone rule (nil: NXDOMAIN); proto "udp" or "tcp" (the TC rule).
function D.answer(q, rule, proto)
  local rcode, tc, records = 0, false, {}
  if rule == nil then
    rcode = 3
  elseif rule.rcode then
    rcode = RCODES[rule.rcode] or rule.rcode
  elseif rule.tc and proto == "udp" then
    tc = true
  else
    local function add(rtype, data)
      records[#records + 1] = u16(0xC00C) .. u16(rtype) .. u16(1) .. u32(60) .. s2(data)
    end
    if q.qtype == 1 then
      for _, ip in ipairs(rule.a or {}) do add(1, ipv4_bytes(ip)) end
    elseif q.qtype == 28 then
      for _, ip in ipairs(rule.aaaa or {}) do add(28, ipv6_bytes(ip)) end
    elseif q.qtype == 12 and rule.ptr then
      add(12, encode_name(rule.ptr))
    end
  end
  -- distinct bits (q.rd is 0 or 0x0100, rcode < 16): their sum is their OR
  local flags = 0x8000 + 0x0400 + q.rd + 0x0080 + rcode + (tc and 0x0200 or 0)
  return u16(q.id) .. u16(flags) .. u16(1) .. u16(#records) .. u16(0) .. u16(0) .. q.question ..
    table.concat(records)
end

--- junk(q, kind) -> message: what the "garbage" rule sends.
function D.junk(q, kind)
  if kind == "id" then
    local a = D.answer(q, { a = { "127.0.0.1" } }, "udp")
    return u16((q.id + 1) % 65536) .. a:sub(3)
  elseif kind == "body" then
    return u16(q.id) .. u16(0x8580) .. u16(1) .. u16(1) .. u16(0) .. u16(0) .. q.question .. "\192\12\0"
  end
  return "\1\2\3\4\5"
end

-- ---------------------------------------------------------------------------
-- the server, as cosock tasks

local Server = {}
Server.__index = Server

function Server:count(name)
  local n = 0
  for _, e in ipairs(self.log) do
    if e.name == name then n = n + 1 end
  end
  return n
end

--- release(name): sends the answers held for name (rule hold = true), and
--- answers later queries for it at once.
function Server:release(name)
  self.released[name] = true
  local held = self.held[name] or {}
  self.held[name] = nil
  for _, send in ipairs(held) do send() end
end

-- A close wakes no task blocked on the socket (cosock's close, the default),
-- so the server's tasks are cancelled, not left waiting on closed sockets.
function Server:stop()
  self.stopped = true
  self.udp:close()
  self.tcp:close()
  for c in pairs(self.conns) do c:close() end
  for _, h in ipairs(self.tasks) do
    if h:is_alive() then pcall(h.cancel, h) end
  end
end

-- Spawns fn with the server's spawn, keeping its handle for stop.
function Server:task(fn, name)
  local h = self.spawn(fn, name)
  if type(h) == "table" and type(h.cancel) == "function" then self.tasks[#self.tasks + 1] = h end
  return h
end

-- Decides and sends the answer to msg; send(reply) delivers it.
function Server:handle(msg, proto, send)
  local q = D.parse_query(msg)
  if q == nil then return end
  self.queries = self.queries + 1
  self.log[#self.log + 1] = { name = q.name, type = TYPES[q.qtype] or q.qtype, proto = proto }
  local rule = self.zone[q.name]
  local function reply()
    if self.stopped then return end
    self.answered = self.answered + 1
    if rule and rule.garbage then send(D.junk(q, rule.garbage)) else send(D.answer(q, rule, proto)) end
  end
  if rule and rule.drop then return end
  if rule and rule.hold and not self.released[q.name] then
    local held = self.held[q.name] or {}
    self.held[q.name] = held
    held[#held + 1] = reply
  elseif rule and rule.delay then
    self:task(function()
      require("cosock").socket.sleep(rule.delay)
      reply()
    end, "dns server: delayed answer")
  else
    reply()
  end
end

--- start(zone [, opts]) -> server: in a task, binds UDP and TCP on one port of
--- 127.0.0.1 (opts.port, or one both are free on) and spawns the tasks that
--- serve them (with opts.spawn, default cosock.spawn).
function D.start(zone, opts)
  opts = opts or {}
  local cosock = require "cosock"
  local socket = cosock.socket
  local port = opts.port
  local self = setmetatable({
    zone = zone or {}, spawn = opts.spawn or cosock.spawn, log = {}, queries = 0, answered = 0,
    held = {}, released = {}, conns = {}, stopped = false, tasks = {},
  }, Server)
  -- The same port number for both (a resolver asks TCP on the UDP port).
  for _ = 1, 20 do
    local u = assert(socket.udp())
    assert(u:setsockname("127.0.0.1", port or 0))
    local _, p = u:getsockname()
    local t = assert(socket.tcp4())
    if t:setoption("reuseaddr", true) and t:bind("127.0.0.1", p) and t:listen(32) then
      self.udp, self.tcp, self.port = u, t, tonumber(p)
      break
    end
    u:close()
    t:close()
  end
  assert(self.port, "no port for both UDP and TCP")
  self.address = "127.0.0.1:" .. self.port
  self:task(function()
    while true do
      local msg, ip, peer = self.udp:receivefrom()
      -- (LuaSocket's receivefrom on a UDP socket closed already gives "":
      -- the server's own mark ends the loop then)
      if not msg or self.stopped then break end
      self:handle(msg, "udp", function(reply) self.udp:sendto(reply, ip, peer) end)
    end
  end, "dns server: udp")
  self:task(function()
    while true do
      local c = self.tcp:accept()
      if not c then break end
      self.conns[c] = true
      self:task(function()
        c:settimeout(10)
        while true do
          local len = c:receive(2)
          if not len then break end
          local msg = c:receive(get_u16(len))
          if not msg then break end
          self:handle(msg, "tcp", function(reply) c:send(s2(reply)) end)
        end
        self.conns[c] = nil
        c:close()
      end, "dns server: tcp connection")
    end
  end, "dns server: tcp")
  return self
end

-- ---------------------------------------------------------------------------
-- for the specs

--- session(zone, fn [, opts]): runs fn(srv, dns) in a task of a cosock.run(),
--- with a server for zone and the resolver pointed at it (opts.timeout, per
--- try, default 0.2 s; opts.tries, default 2). Afterwards it waits (at most
--- 5 s) until no lookup is in flight, so the loop is left clean, and stops
--- the server. Errors of fn come out of run.
function D.session(zone, fn, opts)
  opts = opts or {}
  local cosock = require "cosock"
  local core = require "cosock.core"
  local net = require "spec.support.net"
  local dns = cosock.socket.dns
  cosock.spawn(function()
    local srv = D.start(zone)
    assert(dns.configure { servers = { srv.address }, timeout = opts.timeout or 0.2, tries = opts.tries or 2 })
    fn(srv, dns)
    D.drain()
    srv:stop()
  end, "dns session")
  net.run()
end

--- drain(): in a task, waits (at most 5 s) until no lookup is in flight.
function D.drain()
  local cosock = require "cosock"
  local core = require "cosock.core"
  for _ = 1, 500 do
    if core.dns_stats().lookups == 0 then return end
    cosock.socket.sleep(0.01)
  end
  error("lookups still in flight after 5 s", 2)
end

--- A spec's servers when it has none: the discard port of 127.0.0.1, so no
--- lookup of a spec ever reaches the system's DNS server.
D.NOWHERE = "127.0.0.1:9"

return D
