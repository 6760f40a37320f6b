-- test/fuzz.lua: the protocol fuzzer. Seeded random sequences of tasks that
-- yield hostile recvt/sendt/timeouts, objects whose setwaker raises, yields,
-- re-enters run/reset/spawn/cancel or calls wakers (its own, twice, or stale
-- ones kept from earlier waits), socket, channel and name-lookup calls with
-- hostile arguments. After each sequence every task is cancelled, and the loop must
-- be empty (cosock.core.stats()) and a fresh run must work.
--
-- Invariants checked while a sequence runs:
--   - a task's code never runs once its handle says it is not alive (a
--     cancelled task is never resumed, whatever its old wakers do);
--   - after a yield, every object in the returned recvr/sendr lists is one
--     the task yielded in that kind, and a "timeout" comes with no lists.
-- Errors out of run() are expected (hostile input); crashes, sanitizer
-- reports and broken invariants are not.
--
-- As a module: F.sequence(seed) runs one sequence and raises on a broken
-- invariant; F.run(first_seed, count) runs many. As a program
-- (scripts/fuzz.sh wraps it):
--   lua5.3 test/fuzz.lua SEED COUNT
-- prints "fuzz: seed S failed: ..." and exits 1 at the first failure, so
-- that the seed can be replayed and made into a spec under spec/regress/.
--
-- To fuzz a new feature, add an action to ACTIONS (a task step) or a value
-- maker to OBJECTS (something a task can yield); see doc/reliability.md.
-- (The "watchdog" task below is the fuzzer's own time limit for a sequence;
-- cosock.set_watchdog is fuzzed by the set_watchdog and hog actions.)

local cosock = require "cosock"
local core = require "cosock.core"
local socket = cosock.socket
local channel = cosock.channel
local signal = cosock.signal
local when = cosock.when
local op = require "cosock.op"
local compat = require "cosock.compat"
local pack, unpack, math_type = compat.pack, compat.unpack, compat.math_type

local F = {}

-- What the sequences did, summed over F.run (printed by the program).
F.counts = { steps = 0, yields = 0, resumed = 0, run_errors = 0, watchdog = 0, reports = 0,
  pred_calls = 0, signalled = 0, ops = 0, op_msgs = 0 }
local counts = F.counts

local WATCHDOG = 0.05 -- seconds a sequence may run before its tasks are cancelled
local MAX_TASKS = 24

-- xorshift64*: the same sequence for a seed on every platform and every Lua
-- (5.1 has no integers and no bitwise operators: the 64-bit state is four
-- 16-bit limbs, least significant first, in plain arithmetic).
local floor = math.floor

-- xor of two 16-bit numbers through a table of the xors of two nibbles
local XOR4 = {}
for a = 0, 15 do
  for b = 0, 15 do
    local r, bit = 0, 1
    for _ = 1, 4 do
      if floor(a / bit) % 2 ~= floor(b / bit) % 2 then r = r + bit end
      bit = bit * 2
    end
    XOR4[a * 16 + b] = r
  end
end
local function xor16(a, b)
  local r, m = 0, 1
  for _ = 1, 4 do
    r = r + XOR4[(a % 16) * 16 + b % 16] * m
    a, b, m = floor(a / 16), floor(b / 16), m * 16
  end
  return r
end

local function limbs(hex) -- a 64-bit constant from its 16 hex digits
  return { tonumber(hex:sub(13, 16), 16), tonumber(hex:sub(9, 12), 16),
           tonumber(hex:sub(5, 8), 16), tonumber(hex:sub(1, 4), 16) }
end
local M1 = limbs("9E3779B97F4A7C15")
local A1 = limbs("2545F4914F6CDD1D")
local M2 = limbs("2545F4914F6CDD1D")

local function mul64(x, y) -- x * y mod 2^64
  local r = { 0, 0, 0, 0 }
  for i = 1, 4 do
    local carry = 0
    for j = 1, 5 - i do
      local t = r[i + j - 1] + x[i] * y[j] + carry
      r[i + j - 1] = t % 65536
      carry = floor(t / 65536)
    end
  end
  return r
end

local function add64(x, y) -- x + y mod 2^64
  local r, carry = {}, 0
  for i = 1, 4 do
    local t = x[i] + y[i] + carry
    r[i], carry = t % 65536, floor(t / 65536)
  end
  return r
end

local function limb_at(x, i) return x[i] or 0 end

local function shr64(x, s) -- x >> s, 0 < s < 64
  local q, p = floor(s / 16), 2 ^ (s % 16)
  local r = {}
  for i = 1, 4 do
    r[i] = (floor(limb_at(x, i + q) / p) + (limb_at(x, i + q + 1) % p) * (65536 / p)) % 65536
  end
  return r
end

local function shl64(x, s) -- x << s mod 2^64, 0 < s < 64
  local q, p = floor(s / 16), 2 ^ (s % 16)
  local r = {}
  for i = 1, 4 do
    r[i] = ((limb_at(x, i - q) % (65536 / p)) * p + floor(limb_at(x, i - q - 1) / (65536 / p))) % 65536
  end
  return r
end

local function xor64(x, y)
  return { xor16(x[1], y[1]), xor16(x[2], y[2]), xor16(x[3], y[3]), xor16(x[4], y[4]) }
end

local function new_rng(seed)
  -- (seed * M1 + A1) | 1, seed a non-negative integer below 2^48
  local sl = { seed % 65536, floor(seed / 65536) % 65536, floor(seed / 2 ^ 32) % 65536, 0 }
  local x = add64(mul64(sl, M1), A1)
  if x[1] % 2 == 0 then x[1] = x[1] + 1 end
  local function next_int()
    x = xor64(x, shr64(x, 12))
    x = xor64(x, shl64(x, 25))
    x = xor64(x, shr64(x, 27))
    local v = shr64(mul64(x, M2), 11) -- 53 bits: exact as a float
    return ((v[4] * 65536 + v[3]) * 65536 + v[2]) * 65536 + v[1]
  end
  return function(n) return next_int() % n + 1 end
end
F.new_rng = new_rng -- (for checking it against the integer version)

-- One sequence's state.
local function new_ctx(seed)
  local ctx = {
    seed = seed,
    r = new_rng(seed),
    handles = {},     -- every task spawned (the watchdog's excepted)
    kept = {},        -- every waker ever handed to a fake object
    objs = {},        -- fake objects, channels, sockets of this sequence
    closers = {},     -- what to close after the sequence
    failures = {},
  }
  function ctx.pick(list) return list[ctx.r(#list)] end
  function ctx.fail(msg) ctx.failures[#ctx.failures + 1] = msg end
  return ctx
end

-- ---------------------------------------------------------------------------
-- fake objects: setwaker does something hostile, chosen per call

local SETWAKER_MODES = {
  "plain", "plain", "plain", "plain", "plain", "plain", "ready", "ready", "twice", "raise",
  "raise_table", "raise_on_clear", "yield", "run", "reset", "spawn", "cancel", "stale", "stale",
}

local spawn_task -- below

local function call_stale(ctx)
  if #ctx.kept > 0 then pcall(ctx.pick(ctx.kept)) end
end

-- A fake object: one in four is hostile (its setwaker picks a mode from
-- SETWAKER_MODES on every call); the others keep their waker for the "fire"
-- step, now and then calling it at once.
-- Calls the waker some fake object holds now (the usual way a wait ends),
-- or, with stale, the last one it was given, which its wait may have taken
-- back since (the task may be waiting again, on something else).
local function fire(ctx, stale)
  for _ = 1, 3 do
    local o = ctx.objs[ctx.r(#ctx.objs + 1)]
    local fn
    if o and stale then fn = o.last_recvr or o.last_sendr
    elseif o then fn = o.recvr or o.sendr end
    if fn then return pcall(fn) end
  end
end

local function fake(ctx)
  local o = { label = "fake" .. (#ctx.objs + 1), hostile = ctx.r(4) == 1 }
  function o.setwaker(self, kind, fn)
    if fn then
      ctx.kept[#ctx.kept + 1] = fn
      self["last_" .. kind] = fn
    end
    self[kind] = fn
    local mode = self.hostile and ctx.pick(SETWAKER_MODES) or (ctx.r(8) == 1 and "ready" or "plain")
    if mode == "ready" and fn then fn()
    elseif mode == "twice" and fn then fn() fn()
    elseif mode == "raise" then error("setwaker raised", 0)
    elseif mode == "raise_table" then error({ "a table error" })
    elseif mode == "raise_on_clear" and fn == nil then error("clear raised", 0)
    elseif mode == "yield" then coroutine.yield()
    elseif mode == "run" then cosock.run()
    elseif mode == "reset" then cosock.reset()
    elseif mode == "spawn" then spawn_task(ctx, "from setwaker")
    elseif mode == "cancel" and #ctx.handles > 0 then ctx.pick(ctx.handles):cancel()
    elseif mode == "stale" then call_stale(ctx)
    end
  end
  -- polled through a hostile inner socket (only read when inner_sock is set)
  function o._wake(self, kind)
    local fn = self[kind]
    if fn then fn() end
  end
  ctx.objs[#ctx.objs + 1] = o
  return o
end

-- Things a task may put in its recvt/sendt: objects that speak the waker
-- protocol (most picks), and things that do not.
local OBJECTS = {
  function(ctx) return fake(ctx) end,
  function(ctx) return fake(ctx) end,
  function(ctx) return fake(ctx) end,
  function(ctx) return ctx.rx end,
  function(ctx) return ctx.rx2 end,
  function(ctx) return ctx.brx end,               -- a bounded or rendezvous channel's ends
  function(ctx) return ctx.btx end,
  function(ctx) return #ctx.handles > 0 and ctx.pick(ctx.handles) or fake(ctx) end, -- a handle: join
  function(ctx) return ctx.a end,
  function(ctx) return ctx.b end,
  function(ctx) return ctx.u end,
  function(ctx) local o = fake(ctx) o.inner_sock = ctx.a.inner_sock return o end, -- shares a's fd
}
local HOSTILE_OBJECTS = {
  function(ctx)
    local o = fake(ctx)
    local v = ctx.pick({ -1, 1e10, "x", 0 / 0, {}, 2 ^ 31, -2 ^ 40 })
    o.inner_sock = { getfd = function() return v end }
    return o
  end,
  function(ctx) local o = fake(ctx) o._wake = nil o.inner_sock = ctx.b.inner_sock return o end,
  function() return {} end,                       -- no setwaker
  function() return 42 end,
  function() return "a string" end,
  function(ctx) return ctx.a.inner_sock end,       -- a raw LuaSocket object
  function() return coroutine.create(print) end,
}

local TIMEOUTS = { false, false, false, 0, -1, 0.001, 0.003, "0.002", math.huge, 1e300, -math.huge }
local HOSTILE_TIMEOUTS = { "abc", 0 / 0, {}, true }

local function random_object(ctx)
  return ctx.pick(ctx.r(6) == 1 and HOSTILE_OBJECTS or OBJECTS)(ctx)
end

local function random_set(ctx, send)
  local kind = ctx.r(10)
  if kind <= 3 then return nil end
  if kind == 4 and ctx.r(3) == 1 then return ctx.pick({ 5, "set", true }) end
  local set = {}
  for i = 1, ctx.r(3) do
    local obj = random_object(ctx)
    -- (a channel waits for receiving only: its setwaker refuses "sendr")
    if send and (obj == ctx.rx or obj == ctx.rx2) and ctx.r(4) > 1 then obj = fake(ctx) end
    if kind == 5 then set["k" .. i] = obj else set[i] = obj end
  end
  return set
end

local function contains(set, obj)
  if type(set) ~= "table" then return false end
  for _, v in pairs(set) do if rawequal(v, obj) then return true end end
  return false
end

-- ---------------------------------------------------------------------------
-- task steps

local function hostile_yield(ctx, me)
  local recvt, sendt = random_set(ctx), random_set(ctx, true)
  local t = ctx.pick(ctx.r(8) == 1 and HOSTILE_TIMEOUTS or TIMEOUTS)
  if t == false then t = nil end
  local r, s, err
  counts.yields = counts.yields + 1
  if ctx.r(10) == 1 then
    r, s, err = coroutine.yield(recvt, sendt, t, core.INTERNAL)
  else
    r, s, err = coroutine.yield(recvt, sendt, t)
  end
  counts.resumed = counts.resumed + 1
  if not me.h:is_alive() then ctx.fail("a task that is not alive was resumed") end
  if err == "timeout" and (r ~= nil or s ~= nil) then ctx.fail("a timeout came with ready lists") end
  for _, pair in ipairs({ { r, recvt, "recvr" }, { s, sendt, "sendr" } }) do
    if type(pair[1]) == "table" then
      for _, obj in ipairs(pair[1]) do
        if not contains(pair[2], obj) then ctx.fail(pair[3] .. " lists an object the task did not yield there") end
      end
    end
  end
end

local SOCKET_CALLS = {
  function(ctx) return ctx.a:settimeout(ctx.pick({ "x", -1, 0 / 0, 0.002, {} })) end,
  function(ctx) ctx.a:settimeout(0.002) return ctx.a:receive(ctx.pick({ {}, -5, "*x", 0, 3, "*a", "*l" })) end,
  function(ctx) ctx.b:settimeout(0.002) return ctx.b:receive(2, ctx.pick({ {}, "pre", 7 })) end,
  function(ctx) return ctx.b:send(ctx.pick({ nil, {}, "abc", ("x"):rep(70000) }), ctx.pick({ nil, -100, 2, "q" })) end,
  function(ctx) return ctx.a:send("abc", 10, 2) end,
  function() return socket.bind("127.0.0.1", -1) end,
  function()
    local c = socket.tcp()
    c:settimeout(0.01)
    local ok, err = c:connect("127.0.0.1", 1)
    c:close()
    return ok, err
  end,
  function() return socket.sleep("x") end,
  function() return socket.select(5) end,
  function() return socket.select({ 5 }, nil, 0) end,
  function(ctx) return ctx.u:sendto("x", "127.0.0.1", 0) end,
  -- (not a negative size: LuaSocket mallocs (size_t)-1 for it, which ASan aborts on)
  function(ctx) ctx.u:settimeout(0.001) return ctx.u:receivefrom(ctx.pick({ 0, 70000, "x" })) end,
  function(ctx) return ctx.u:setpeername("127.0.0.1", ctx.pick({ -1, "x", 70000 })) end,
  function(ctx) return ctx.tx:send(ctx.pick({ nil, "m", {} })) end,
  function(ctx) return ctx.rx:settimeout(ctx.pick({ "x", -1, 0.001, {} })) end,
  function(ctx) ctx.rx:settimeout(0.002) return ctx.rx:receive() end,
  function(ctx) ctx.rx2:settimeout(0.002) return ctx.rx2:receive() end,
  function(ctx) return ctx.tx2:close() end,
  function(ctx) if ctx.r(4) == 1 then return ctx.b:close() end end,
  function() return cosock.get_thread_metadata() end,
  function() return cosock.stats() end,
}

-- The wrap that records a message received on tx3's rendezvous (the
-- cosock.op part, below), and whether a watchdog report came from inside it.
local function record_received3(ctx)
  return function(v, err)
    if v ~= nil then
      if ctx.received3[v] then ctx.fail("an op message was received twice") end
      ctx.received3[v] = true
    end
    return v, err
  end
end
local RECORD3 = debug.getinfo(record_received3, "S")
F.record_received3 = record_received3

-- Was the watchdog's report made inside a wrap record_received3 made (the
-- first frame of its traceback)?
local function in_record3(report)
  local tb = type(report) == "table" and report.traceback
  local line = type(tb) == "string" and tonumber(tb:match("^stack traceback:\n\t[^\n]-fuzz%.lua:(%d+):"))
  return line ~= nil and line >= RECORD3.linedefined and line <= RECORD3.lastlinedefined
end
F.in_record3 = in_record3

-- Accounting and the watchdog (doc/accounting-and-watchdog.md): switches
-- flipped at random, watchdogs with hostile arguments and reporters that
-- raise, yield, re-enter the loop or cancel, and tasks that hog the loop
-- long enough for a 1-2 ms watchdog to fire (in a pcall, or in a coroutine
-- of their own).
local WATCHDOG_LIMITS = { 0.001, 0.002, false, 0, -1, "x", 0 / 0, math.huge }
local WATCHDOG_ACTIONS = { false, "report", "error", "error", "bogus" }
local REPORTERS = {
  function() return function() end end,
  function() return function() end end,
  function() return function() error("reporter raised", 0) end end,
  function() return function() coroutine.yield() end end,
  function() return function() cosock.set_watchdog(nil) end end,
  function() return function() pcall(cosock.run) end end,
  function() return function() cosock.get_thread_metadata() end end,
  function(ctx) return function() spawn_task(ctx, "from reporter") end end,
  function(ctx)
    return function() if #ctx.handles > 0 then pcall(ctx.pick(ctx.handles).cancel, ctx.pick(ctx.handles)) end end
  end,
  function() return 42 end,                         -- not a function: refused
}

local function hog(ctx)
  local s = ctx.pick({ 0.0005, 0.002, 0.004 })
  local function spin()
    local t0 = core.monotime()
    while core.monotime() - t0 < s do end
  end
  local how = ctx.r(3)
  if how == 1 then spin()
  elseif how == 2 then pcall(spin)
  else
    local co = coroutine.create(spin)
    coroutine.resume(co)
  end
end

local function set_watchdog(ctx)
  local limit, action = ctx.pick(WATCHDOG_LIMITS), ctx.pick(WATCHDOG_ACTIONS)
  if limit == false then limit = nil end
  if action == false then action = nil end
  local reporter = ctx.pick(REPORTERS)(ctx)
  if type(reporter) == "function" then
    local inner = reporter
    reporter = function(r)
      counts.reports = counts.reports + 1
      if in_record3(r) then ctx.received3_cut = ctx.received3_cut + 1 end
      return inner(r)
    end
  end
  pcall(cosock.set_watchdog, limit, action, reporter)
end

-- Name lookups (a build with c-ares): hostile names and arguments, a lookup
-- bounded by a socket timeout, one in a coroutine the task forwards, servers
-- changed under lookups in flight. The servers are 127.0.0.1:9, where nothing
-- answers (each sequence sets them): no lookup leaves the machine.
local NAMES = { "x.test", "x.test", "localhost", "", "127.0.0.1", "::1", "a..b", ("a"):rep(300), 5, {}, nil }
local DNS_CALLS = {
  function(ctx) return socket.dns.toip(ctx.pick(NAMES)) end,
  function(ctx) return socket.dns.tohostname(ctx.pick(NAMES)) end,
  function(ctx) return socket.dns.getaddrinfo(ctx.pick(NAMES)) end,
  function(ctx) return socket.dns.getnameinfo(ctx.pick(NAMES), ctx.pick({ nil, "http", "0", "99999", {} })) end,
  function(ctx)
    local c = socket.tcp()
    c:settimeout(ctx.pick({ 0, 0.001, 0.01 }), ctx.pick({ "b", "t" }))
    local ok, err = c:connect(ctx.pick({ "x.test", "localhost" }), 9)
    c:close()
    return ok, err
  end,
  function(ctx) return ctx.u:sendto("x", ctx.pick({ "x.test", "localhost" }), 9) end,
  function(ctx) return socket.dns.setservers(ctx.pick({ { "127.0.0.1:9" }, {}, "x", { "bad" }, { 5 } })) end,
  function()
    local co = coroutine.wrap(function() return "done", socket.dns.toip("x.test") end)
    local v = pack(co())
    while v[1] ~= "done" do v = pack(co(coroutine.yield(unpack(v, 1, v.n)))) end
  end,
}
local function dns_call(ctx)
  if core.dns == "c-ares" then pcall(ctx.pick(DNS_CALLS), ctx) end
end
-- ---------------------------------------------------------------------------
-- signals and predicates (cosock.signal, cosock.when)

local SIGNAL_NAMES = { "a", "b", 1 }
local SIGNAL_TIMEOUTS = { false, false, 0, 0.001, 0.003 }

-- What a signal raised by these steps carries: a waiter must get one of these.
local function sent_by_us(v) return v == "sig" or v == "from pred" end

-- A predicate that does something chosen at random on each call: true after
-- a few calls, false, nil, raise, yield, wait, cancel a task (maybe its own),
-- spawn, signal, call run or reset. alive() says whether the task waiting on
-- it is alive: a predicate is never called for a task that is not.
local function random_pred(ctx, alive)
  local calls, after = 0, ctx.r(6)
  return function()
    if alive and not alive() then ctx.fail("a predicate was called for a task that is not alive") end
    calls = calls + 1
    counts.pred_calls = counts.pred_calls + 1
    local kind = ctx.r(14)
    if kind <= 2 then return calls >= after, "pred value" end
    if kind == 3 then return nil end
    if kind == 4 then error("predicate raised", 0) end
    if kind == 5 then error({ "a table from a predicate" }) end
    if kind == 6 then coroutine.yield() end
    if kind == 7 then signal.wait("a") end
    if kind == 8 and #ctx.handles > 0 then pcall(ctx.pick(ctx.handles).cancel, ctx.pick(ctx.handles)) end
    if kind == 9 then signal.all(ctx.pick(SIGNAL_NAMES), "from pred") end
    if kind == 10 then spawn_task(ctx, "from a predicate") end
    if kind == 11 then pcall(cosock.run) pcall(cosock.reset) end
    if kind == 12 then pcall(when.wait, function() return false end) end
    return false
  end
end

local PRED_TIMEOUTS = { false, false, 0, 0.001, 0.004 }

local PREDICATE_STEPS = {
  function(ctx, me) -- when.wait
    local t = ctx.pick(PRED_TIMEOUTS)
    local r = pack(pcall(when.wait, random_pred(ctx, function() return me.h:is_alive() end), t or nil))
    if r[1] and r[2] == nil and r[3] ~= "timeout" then ctx.fail("when.wait returned nil without a timeout") end
    if r[1] and r[3] == "timeout" and not t then ctx.fail("when.wait timed out without a timeout") end
  end,
  function(ctx) -- signal.wait
    local t = ctx.pick(SIGNAL_TIMEOUTS)
    local ok, got, v = pcall(signal.wait, ctx.pick(SIGNAL_NAMES), t or nil)
    if ok and got == true then counts.signalled = counts.signalled + 1 end
    if ok and got == true and not sent_by_us(v) then ctx.fail("a signal came with arguments nobody sent") end
    if ok and got == nil and (v ~= "timeout" or not t) then ctx.fail("signal.wait ended without a signal or its timeout") end
  end,
  function(ctx) -- signal.one / signal.all
    local f = ctx.r(2) == 1 and signal.one or signal.all
    local n = f(ctx.pick(SIGNAL_NAMES), "sig", nil, ctx.r(3))
    if math_type(n) ~= "integer" or n < 0 or (f == signal.one and n > 1) then
      ctx.fail("signal." .. (f == signal.one and "one" or "all") .. " returned " .. tostring(n))
    end
  end,
  function(ctx) -- when.when, when.whenever, when.signal_on, signal.on
    if #ctx.handles >= MAX_TASKS then return end
    local h
    local pred = random_pred(ctx, function() return h == nil or h:is_alive() end)
    local k = ctx.r(4)
    if k == 1 then h = when.when(pred, function() end)
    elseif k == 2 then h = when.whenever(pred, function() if ctx.r(3) == 1 then socket.sleep(0) end end)
    elseif k == 3 then h = when.signal_on(pred, ctx.pick(SIGNAL_NAMES), "sig")
    else h = signal.on(ctx.pick(SIGNAL_NAMES), function(v)
      if not sent_by_us(v) then ctx.fail("signal.on's fn got arguments nobody sent") end
    end) end
    ctx.handles[#ctx.handles + 1] = h
  end,
  function(ctx) -- hostile arguments, and the interval
    local calls = {
      function() return signal.wait(nil) end,
      function() return signal.one(0 / 0) end,
      function() return signal.all() end,
      function() return signal.wait("a", ctx.pick({ -1, "x", 0 / 0, {} })) end,
      function() return signal.on("a", "not a function") end,
      function() return when.wait(ctx.pick({ 5, "p", {} })) end,
      function() return when.wait(function() return true end, ctx.pick({ -1, "x", 0 / 0 })) end,
      function() return when.whenever(print, 7) end,
      function() return when.signal_on(print, 0 / 0) end,
      function() return when.set_interval(ctx.pick({ 0, -1, math.huge, "x", 0.001, 0.02 })) end,
    }
    pcall(ctx.pick(calls))
  end,
}

-- cosock.op: performs of random operations over the sequence's channels (a
-- rendezvous kept for ops, tx3/rx3, whose messages are numbered), sockets,
-- handles and a condition. Invariant: a message on tx3 is received at most
-- once, and every message whose send perform returned true is received (at
-- the end of the sequence). Recording happens in wrap functions, which run in
-- the perform once it committed. A wrap is the program's code: the watchdog
-- (the set_watchdog and hog actions) may interrupt the receiving wrap before
-- it recorded the message it was given (at its first instruction, the first
-- outside cosock's code after the take), with its "error" action or by a
-- reporter that raises. Such a message is the program's loss, not cosock's:
-- the fuzzer's reporter counts the reports made inside that wrap
-- (received3_cut) and the check allows one message per report.

local OP_MAKERS = {
  function(ctx)
    return op.recv(ctx.rx3):wrap(record_received3(ctx))
  end,
  function(ctx)
    ctx.next3 = ctx.next3 + 1
    local id = ctx.next3
    return op.send(ctx.tx3, id):wrap(function(ok)
      if ok then
        ctx.sent3[id] = true
        counts.op_msgs = counts.op_msgs + 1
      end
      return ok
    end)
  end,
  function(ctx) return op.recv(ctx.rx) end,
  function(ctx) return op.send(ctx.tx, "op") end,
  function(ctx) return op.sleep(ctx.pick({ 0, 0.001, 0.002 })) end,
  function(ctx) return op.deadline(core.monotime() + 0.001) end,
  function(ctx) return ctx.cond:wait_op() end,
  function(ctx) return op.readable(ctx.a) end,
  function(ctx) return op.writable(ctx.b) end,
  function(ctx) return op.always(ctx.r(3)) end,
  function() return op.never() end,
  function(ctx) if #ctx.handles > 0 then return op.join(ctx.pick(ctx.handles)) end return op.never() end,
  function() return op.guard(function() error("guard raised", 0) end) end,
  function(ctx) return op.with_nack(function(nack) ctx.nacks[#ctx.nacks + 1] = nack return op.sleep(0.001) end) end,
}

local function random_op(ctx, depth)
  if ctx.r(3) == 1 then return OP_MAKERS[ctx.r(2)](ctx) end -- the rendezvous, more often
  if depth < 2 and ctx.r(3) == 1 then
    local ops = {}
    for i = 1, ctx.r(4) do ops[i] = random_op(ctx, depth + 1) end
    return op.choice(unpack(ops))
  end
  return ctx.pick(OP_MAKERS)(ctx)
end

local function op_step(ctx)
  -- always a way out: a perform must not wait for longer than the watchdog
  local o = op.choice(random_op(ctx, 0), op.sleep(0.003))
  if pcall(o.perform, o) then counts.ops = counts.ops + 1 end
end

-- cosock.scope and cosock.sync: a scope (with a short deadline) of a few
-- tasks that take the sequence's lock, sleep, fail or wait on a channel,
-- maybe cancelled at once; the lock must be free again once the scope ended
-- unless a task outside it holds it.
local function scope_step(ctx)
  local scope, sync = require "cosock.scope", require "cosock.sync"
  ctx.lock = ctx.lock or sync.lock()
  local lock = ctx.lock
  pcall(scope.run, { timeout = ctx.pick({ 0, 0.001, 0.003 }), grace = 0.002 }, function(s)
    for _ = 1, ctx.r(3) do
      local k = ctx.r(5)
      s:spawn(function()
        if k == 1 then
          if lock:acquire(0.002) then socket.sleep(ctx.pick({ 0, 0.001 })) end
        elseif k == 2 then socket.sleep(0.01)
        elseif k == 3 then error("scoped task error", 0)
        elseif k == 4 then -- (taken only when chosen: released below, or at the task's end)
          if op.choice(lock:acquire_op(), op.sleep(0.002)):perform() == true then socket.sleep(0) end
        else ctx.rx:receive() end
      end, "scoped")
    end
    if ctx.last_scope and ctx.r(2) == 1 then -- the previous scope ended: ready at once
      assert(op.choice(ctx.last_scope:wait_op():wrap(function() return true end), op.always(false)):perform())
    end
    ctx.last_scope = s
    if ctx.r(2) == 1 then s:cancel() end
    socket.sleep(0.001)
  end)
end

local ACTIONS = {
  dns_call, dns_call,
  scope_step, scope_step,
  op_step, op_step,
  function(ctx) if ctx.r(3) == 1 then ctx.cond:signal() end end,
  hostile_yield, hostile_yield, hostile_yield,
  function(ctx) pcall(cosock.set_accounting, ctx.r(2) == 1) end,
  set_watchdog, set_watchdog,
  hog, hog,
  function(ctx) socket.sleep(ctx.pick({ 0, 0.001, 0.002 })) end,
  function(ctx) pcall(ctx.pick(SOCKET_CALLS), ctx) end,
  function(ctx) pcall(ctx.pick(SOCKET_CALLS), ctx) end,
  function(ctx) if #ctx.handles > 0 then pcall(ctx.pick(ctx.handles).cancel, ctx.pick(ctx.handles)) end end,
  function(ctx, me) pcall(me.h.cancel, me.h) end,   -- itself: raises
  function(ctx) spawn_task(ctx, "spawned") end,
  function(ctx) call_stale(ctx) end,
  function(ctx) fire(ctx) end,
  function(ctx) fire(ctx) end,
  function(ctx) fire(ctx, "stale") end,
  function(ctx) pcall(cosock.run) end,              -- from inside a task: raises
  function(ctx) pcall(cosock.reset) end,            -- while running: raises
  function(ctx, me)                                 -- a coroutine whose yields the task forwards
    local co = coroutine.wrap(function() hostile_yield(ctx, me) return "done" end)
    local v = pack(co())
    while v[1] ~= "done" do v = pack(co(coroutine.yield(unpack(v, 1, v.n)))) end
  end,
  function(ctx)
    local v = ctx.pick({ "task error", { "table error" }, nil, 7 })
    error(v, 0)
  end,
  function(ctx)                                     -- join anyone, itself included (raises)
    if #ctx.handles > 0 then
      local h = ctx.pick(ctx.handles)
      pcall(h.join, h, ctx.pick({ nil, 0, 0.002, -1, "x", 0 / 0 }))
    end
  end,
  function(ctx)                                     -- bounded / rendezvous channel calls
    ctx.btx:settimeout(ctx.pick({ 0, 0.002, -1, nil }))
    pcall(ctx.btx.send, ctx.btx, ctx.pick({ 1, "m", nil }))
  end,
  function(ctx)
    ctx.brx:settimeout(ctx.pick({ 0, 0.002, -1, nil }))
    pcall(ctx.brx.receive, ctx.brx)
  end,
  function(ctx) if ctx.r(6) == 1 then ctx.pick({ ctx.btx, ctx.brx }):close() end end,
  function(ctx)                                     -- an error handler, or none; it may raise
    cosock.set_error_handler(ctx.pick({
      false, function() end, function(e) error(e, 0) end, function() error({ "from the handler" }) end,
    }) or nil)
  end,
  function(ctx, me) ctx.pick(PREDICATE_STEPS)(ctx, me) end,
  function(ctx, me) ctx.pick(PREDICATE_STEPS)(ctx, me) end,
  function(ctx, me) ctx.pick(PREDICATE_STEPS)(ctx, me) end,
  function(ctx, me) ctx.pick(PREDICATE_STEPS)(ctx, me) end,
}

function spawn_task(ctx, why)
  if #ctx.handles >= MAX_TASKS then return end
  local me = {}
  local steps = ctx.r(6)
  local ok, h = pcall(cosock.spawn, function()
    if not me.h:is_alive() then ctx.fail("a task that is not alive started") end
    for _ = 1, steps do
      counts.steps = counts.steps + 1
      ctx.pick(ACTIONS)(ctx, me)
      if not me.h:is_alive() then ctx.fail("a task that is not alive went on") end
    end
  end, ctx.pick({ why, nil, 5, {} }))
  if ok then
    me.h = h
    ctx.handles[#ctx.handles + 1] = h
  end
end

-- ---------------------------------------------------------------------------
-- one sequence

local function stats_line()
  local st = core.stats()
  return ("%d tasks, %d ready, %d timers, %d fds"):format(st.tasks, st.ready, st.timers, st.fds)
end

local function empty()
  local st = core.stats()
  return st.tasks == 0 and st.ready == 0 and st.timers == 0 and st.fds == 0
end
F.empty = empty

-- A fresh run after the sequence: a waiter on an object another task wakes,
-- a channel message, a sleep.
local function fresh_run_works()
  local got, woke
  local o = {}
  function o.setwaker(self, _, fn) self.fn = fn end
  local tx, rx = channel.new()
  cosock.spawn(function()
    local r = coroutine.yield({ o }, nil, 1)
    woke = r and r[1] == o
    rx:settimeout(1)
    got = rx:receive()
    socket.sleep(0.001)
  end, "fresh waiter")
  cosock.spawn(function()
    for _ = 1, 100 do if o.fn then break end socket.sleep(0) end
    o.fn()
    tx:send("fresh")
  end, "fresh waker")
  cosock.run()
  return woke and got == "fresh" and empty()
end

-- After a sequence's tasks are cancelled: run() must return and leave the
-- loop empty (also test/reentry.lua's). Lookups of cancelled tasks end by
-- themselves (their answers are dropped); until then the resolver's timer
-- is armed.
function F.settle(ctx)
  if core.dns == "c-ares" and core.dns_stats().lookups > 0 then
    cosock.spawn(function()
      for _ = 1, 500 do
        if core.dns_stats().lookups == 0 then break end
        socket.sleep(0.002)
      end
    end, "drain lookups")
  end
  local ok, err = pcall(cosock.run)
  if not ok then ctx.fail("run() after cancelling every task raised: " .. tostring(err)) end
  if not empty() then ctx.fail("the loop is not empty after the sequence: " .. stats_line()) end
  if core.dns == "c-ares" and core.dns_stats().lookups > 0 then ctx.fail("lookups left in flight") end
end

-- Every message on tx3 whose send returned true was received, but those a
-- watchdog report inside the receiving wrap may have cut (one per report).
function F.check_op_messages(ctx)
  local missing = 0
  for id in pairs(ctx.sent3) do
    if not ctx.received3[id] then missing = missing + 1 end
  end
  if missing > ctx.received3_cut then
    ctx.fail(("an op send returned true, its message was never received (%d such, %d receiving wraps"
      .. " cut by the watchdog)"):format(missing, ctx.received3_cut))
  end
end

function F.sequence(seed)
  local ctx = new_ctx(seed)
  cosock.reset()
  ctx.tx, ctx.rx = channel.new()
  ctx.tx2, ctx.rx2 = channel.new()
  ctx.btx, ctx.brx = channel.new(ctx.pick({ 0, 1, 2 }))
  if core.dns == "c-ares" then
    assert(socket.dns.configure { servers = { "127.0.0.1:9" }, timeout = 0.01, tries = 1 })
  end
  ctx.tx3, ctx.rx3 = channel.new(0)
  ctx.sent3, ctx.received3, ctx.next3, ctx.nacks, ctx.cond = {}, {}, 0, {}, op.cond()
  ctx.received3_cut = 0
  ctx.u = assert(socket.udp())
  assert(ctx.u:setsockname("127.0.0.1", 0))
  ctx.closers[#ctx.closers + 1] = ctx.u
  -- a connected TCP pair, made by a task (connect waits)
  cosock.spawn(function()
    local srv = assert(socket.bind("127.0.0.1", 0))
    srv:settimeout(1)
    local c = assert(socket.connect("127.0.0.1", (select(2, srv:getsockname()))))
    ctx.a, ctx.b = c, assert(srv:accept())
    srv:close()
    ctx.closers[#ctx.closers + 1] = ctx.a
    ctx.closers[#ctx.closers + 1] = ctx.b
  end, "pair")
  cosock.run()
  if ctx.r(3) == 1 then set_watchdog(ctx) end     -- (cosock.set_watchdog; reset above cleared it)
  for _ = 1, ctx.r(8) do spawn_task(ctx, "task") end
  -- The watchdog ends the sequence: nothing else can cancel it.
  local started = core.monotime()
  cosock.spawn(function()
    while core.stats().tasks > 1 and core.monotime() - started < WATCHDOG do socket.sleep(0.002) end
    if core.stats().tasks > 1 then counts.watchdog = counts.watchdog + 1 end
    for _, h in ipairs(ctx.handles) do pcall(h.cancel, h) end
  end, "watchdog")
  for _ = 1, 200 do
    if pcall(cosock.run) then break end
    counts.run_errors = counts.run_errors + 1
  end
  -- Whatever is left: cancel it; then nothing may remain.
  for _, h in ipairs(ctx.handles) do pcall(h.cancel, h) end
  if ctx.r(4) == 1 then cosock.reset() end
  F.settle(ctx)
  F.check_op_messages(ctx)
  for _, h in ipairs(ctx.handles) do
    if h:is_alive() then ctx.fail("a cancelled task is alive") break end
  end
  for _, s in ipairs(ctx.closers) do pcall(s.close, s) end
  cosock.reset()
  ok, err = pcall(fresh_run_works)
  if not ok or not err then ctx.fail("a fresh run after the sequence failed: " .. tostring(err)) end
  if #ctx.failures > 0 then
    error(("seed %d: %s"):format(seed, table.concat(ctx.failures, "; ")), 0)
  end
end

-- Runs count sequences from first_seed; raises at the first failure.
function F.run(first_seed, count)
  local quiet = { print = print }
  _G.print = function() end -- the stall hook's thread dumps
  local ok, err = pcall(function()
    for seed = first_seed, first_seed + count - 1 do F.sequence(seed) end
  end)
  _G.print = quiet.print
  cosock.set_accounting(false)              -- (reset turns the watchdog off, not this)
  if not ok then error(err, 0) end
end

if arg and arg[0] and arg[0]:match("fuzz%.lua$") then -- run as a program: lua5.3 test/fuzz.lua SEED COUNT
  local seed, count = tonumber(arg[1] or 1), tonumber(arg[2] or 1000)
  local t0 = os.clock()
  local ok, err = pcall(F.run, seed, count)
  if not ok then
    io.stderr:write("fuzz: ", tostring(err), "\n")
    io.stderr:write(("fuzz: replay with scripts/fuzz.sh --seed %s --count 1\n"):format(
      tostring(err):match("^seed (%d+)") or "?"))
    os.exit(1)
  end
  print(("fuzz: %d sequences from seed %d passed (%.1f s CPU): %d task steps, %d yields, %d resumed,"
    .. " %d errors out of run, %d ended by the watchdog, %d cosock.set_watchdog reports,"
    .. " %d predicate calls, %d signals received, %d op performs, %d op messages"):format(count, seed,
    os.clock() - t0, counts.steps, counts.yields, counts.resumed, counts.run_errors, counts.watchdog,
    counts.reports, counts.pred_calls, counts.signalled, counts.ops, counts.op_msgs))
end

return F
