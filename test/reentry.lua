-- test/reentry.lua: the re-entrancy and finalizer fuzzers. The loop runs
-- program Lua from its C code at many points (setwaker, _wake, an inner
-- socket's getfd and dirty, wakers, predicates, the error handler, the
-- watchdog's reporter, and finalizers at any allocation); each may call any
-- public function. A seeded workload of tasks waits on fake objects, fake
-- wrappers over UDP sockets, channels, sleeps, predicates, op performs and
-- joins, raises and hogs; meanwhile
--   mode "reentry":   each callback point now and then calls a random public
--                     function (reset, spawn, cancel, run, sleep and select
--                     outside a task, a lookup, a perform, a send, a signal,
--                     a waker, a join, a collection step);
--   mode "finalizer": tasks and callbacks drop garbage whose finalizers do
--                     that, so the calls come from inside the loop's own
--                     allocations (the collector is made eager meanwhile).
-- The workload also runs scopes (with deadlines, tasks and deferred
-- functions, a callback point), a lock's acquire and acquire_op, and an
-- OS-signal receiver's waits; one sequence in five runs under cosock.sim
-- (no real socket then: the wrappers' steps sleep instead).
-- Checked: every call works or raises a string error (never a Lua runtime
-- error out of cosock's own code); after each sequence, with every task
-- cancelled, run() returns, the loop is empty and a fresh run works;
-- crashes and sanitizer reports end the run.
--
-- As a module: R.run(mode, first_seed, count). As a program (scripts/fuzz.sh
-- --reentry / --finalizer wraps it):
--   lua5.3 test/reentry.lua MODE SEED COUNT
-- To cover a new public function, add it to CALLS; a new callback point, call
-- hook(ctx, "where") from it. doc/reliability.md has the commands.

local here = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./")
local F = dofile(here .. "fuzz.lua")               -- its generator and end checks
local garbage = dofile(here .. "../spec/support/version.lua").garbage

local cosock = require "cosock"
local core = require "cosock.core"
local raw = require "socket"
local socket = cosock.socket
local channel = cosock.channel
local op = require "cosock.op"
local when = cosock.when
local signal = cosock.signal
local scope = require "cosock.scope"
local sync = require "cosock.sync"
local sim = require "cosock.sim"

local R = {}
R.counts = { calls = 0, refused = 0, finalizers = 0, steps = 0 }
R.errors = os.getenv("REENTRY_ERRORS") and {} or nil -- the distinct errors, printed at the end
R.trace = os.getenv("REENTRY_TRACE")               -- every call, to standard error
local counts = R.counts

local MAX_DEPTH = 2 -- public calls made from inside public calls made from callbacks

-- ---------------------------------------------------------------------------
-- the public calls a callback point may make

local task_body -- below
local MAX_TASKS = 80 -- per sequence (tasks spawn tasks)

local function spawn_task(ctx, steps, name)
  if ctx.spawned >= MAX_TASKS then return end
  ctx.spawned = ctx.spawned + 1
  ctx.handles[#ctx.handles + 1] = cosock.spawn(function() task_body(ctx, steps) end, name)
end

local CALLS = {
  reset = function() cosock.reset() end,
  spawn = function(ctx) spawn_task(ctx, 2, "spawned") end,
  spawn_many = function(ctx)                   -- (a finalizer then runs inside spawn, often)
    for _ = 1, ctx.r(40) do spawn_task(ctx, 1, "one of many") end
  end,
  cancel = function(ctx)
    local h = ctx.handles[ctx.r(#ctx.handles + 1)]
    if h then h:cancel() end
  end,
  run = function() cosock.run() end,
  sleep = function() socket.sleep(0) end,
  select = function(ctx) socket.select({ ctx.u }, nil, 0) end,
  lookup = function()
    local co = coroutine.create(function() return socket.dns.toip("reentry.invalid") end)
    local ok, err = coroutine.resume(co)
    if not ok then error(err, 0) end
  end,
  numeric_lookup = function() socket.dns.toip("127.0.0.1") end,
  perform = function(ctx) op.perform(op.choice(op.recv(ctx.rx2), op.always("none"))) end,
  send = function(ctx) ctx.tx:send("msg") end,
  receive = function(ctx) ctx.rx:receive() end,
  signal = function(ctx) (ctx.r(2) == 1 and signal.all or signal.one)("reentry", 1) end,
  waker = function(ctx)
    local fn = ctx.kept[ctx.r(#ctx.kept + 1)]
    if fn then fn() end
  end,
  join = function(ctx)
    local h = ctx.handles[ctx.r(#ctx.handles + 1)]
    if h then h:join(0) end
  end,
  stats = function() cosock.get_thread_metadata(); core.stats() end,
  gc = function() collectgarbage("step") end,
  scope_cancel = function(ctx)
    local sc = ctx.scopes[ctx.r(8)]
    if sc then sc:cancel() end
  end,
  acquire = function(ctx) if ctx.lock:acquire(0) then ctx.lock:release() end end,
  release = function(ctx) ctx.lock:release() end,
  stop = function(ctx)
    ctx.stopped = true -- (from a task, stop spawns a task of its own: see R.sequence)
    cosock.stop()
  end,
  ossignal = function(ctx) -- (receive with a timeout of 0 only looks: also under cosock.sim)
    ctx.osrx:settimeout(0)
    ctx.osrx:receive()
    ctx.osrx:settimeout(0.002)
  end,
  ossignal_close = function(ctx) if ctx.r(4) == 1 then ctx.osrx:close() end end,
  sim_now = function() sim.now() end,
  sim_on_off = function(ctx) -- (in a simulated sequence only: real sockets cannot wait under it)
    if not ctx.sim or ctx.r(4) ~= 1 then return end
    if ctx.r(2) == 1 then sim.off() else sim.on({ seed = ctx.r(100), record = false }) end
  end,
}
local CALL_NAMES = {}
for name in pairs(CALLS) do CALL_NAMES[#CALL_NAMES + 1] = name end
table.sort(CALL_NAMES) -- (pairs order differs between runs: the seed must not)

-- A Lua runtime error raised from cosock's own files is a bug of ours (a
-- yield it cannot make where it was called is not: the caller's place).
local function internal(err)
  local what = type(err) == "string" and err:match("cosock[^:]*%.lua:%d+: attempt to (%a+)")
  return what and what ~= "yield"
end

-- Makes one random public call, protected; checks how it failed.
local function call(ctx, where)
  -- (none once the sequence is over: a task of a scope cancelled then
  -- still runs its cleanup, whose calls would start the sequence again)
  if ctx.depth >= MAX_DEPTH or ctx.done then return end
  local name = CALL_NAMES[ctx.r(#CALL_NAMES)]
  if R.trace then io.stderr:write(("reentry: %s from %s\n"):format(name, where)) end
  ctx.depth = ctx.depth + 1
  counts.calls = counts.calls + 1
  local ok, err = pcall(CALLS[name], ctx)
  ctx.depth = ctx.depth - 1
  if ok then return end
  counts.refused = counts.refused + 1
  if R.errors then R.errors[name .. ": " .. tostring(err):gsub("0x%x+", "0x?"):sub(1, 140)] = true end
  if type(err) ~= "string" and type(err) ~= "table" then
    ctx.fail(("%s from %s raised a %s"):format(name, where, type(err)))
  elseif internal(err) then
    ctx.fail(("%s from %s: %s"):format(name, where, err))
  end
end

-- A callback point: in mode reentry, now and then a public call; in mode
-- finalizer, now and then garbage whose finalizer makes one.
local function hook(ctx, where)
  if ctx.mode == "reentry" then
    if ctx.r(3) == 1 then call(ctx, where) end
  elseif ctx.r(2) == 1 then
    for _ = 1, ctx.r(8) do
      garbage(function()
        if ctx.done then return end
        counts.finalizers = counts.finalizers + 1
        if ctx.r(2) == 1 then call(ctx, "a finalizer at " .. where) end
      end)
    end
    -- A push now and then, so that cycles end within a sequence also when
    -- the program around keeps a big heap (busted): most finalizers still
    -- run at later allocations, the loop's among them.
    if ctx.r(4) == 1 then collectgarbage("step", 256) end
  end
end

-- ---------------------------------------------------------------------------
-- objects whose protocol calls are callback points

local function fake(ctx)
  local o = {}
  function o:setwaker(kind, fn)
    if fn then ctx.kept[#ctx.kept + 1] = fn end
    self[kind] = fn
    hook(ctx, fn and "setwaker" or "setwaker(nil)")
    if fn and ctx.r(6) == 1 then fn() end      -- ready at once
  end
  return o
end

-- A wrapper over a UDP socket the sequence sends to: the loop polls it and
-- calls _wake, getfd and dirty.
local function wrapper(ctx)
  local u = assert(raw.udp())
  assert(u:setsockname("127.0.0.1", 0))
  u:settimeout(0)
  ctx.closers[#ctx.closers + 1] = u
  local inner = setmetatable({}, { __index = function(_, k)
    local m = u[k]
    if type(m) ~= "function" then return m end
    return function(_, ...) return m(u, ...) end
  end })
  -- Now and then its first asks say -1 (a socket not made yet): the loop
  -- lists the wait and asks again after each pass (a callback point too).
  local late = ctx.r(3) == 1 and ctx.r(3) or 0
  function inner.getfd()
    hook(ctx, "getfd")
    if late > 0 then late = late - 1 return -1 end
    return u:getfd()
  end
  function inner.dirty() hook(ctx, "dirty") return false end
  local w = { inner_sock = inner, port = select(2, u:getsockname()) }
  function w:setwaker(kind, fn)
    if fn then ctx.kept[#ctx.kept + 1] = fn end
    self[kind] = fn
    hook(ctx, "wrapper setwaker")
  end
  function w:_wake(kind)
    u:receive()                                -- (drained: not ready again)
    hook(ctx, "_wake")
    if self[kind] then self[kind]() end
  end
  return w
end

-- ---------------------------------------------------------------------------
-- the workload

-- A scope of a step of this task and one or two tasks of their own, now
-- and then with a deadline; its deferred function is a callback point.
local function scope_step(ctx)
  if ctx.scope_depth >= 3 then return end
  ctx.scope_depth = ctx.scope_depth + 1
  local ok, err = pcall(scope.run, { timeout = ctx.r(3) == 1 and 0.002 or nil, grace = 0.002 }, function(s)
    ctx.scopes[ctx.r(8)] = s -- (the last few, for scope_cancel)
    s:defer(function() hook(ctx, "a deferred function") end)
    for _ = 1, ctx.r(2) do
      if ctx.spawned < MAX_TASKS then
        ctx.spawned = ctx.spawned + 1
        ctx.handles[#ctx.handles + 1] = s:spawn(function() task_body(ctx, 1) end, "scoped")
      end
    end
    task_body(ctx, 1)
  end)
  ctx.scope_depth = ctx.scope_depth - 1
  -- The task's own cancellation (handle:cancel, an enclosing scope's)
  -- goes on, as the guide asks of code that catches it.
  if not ok and err == scope.cancelled then error(err, 0) end
end

local STEPS = {
  function(ctx) coroutine.yield({ ctx.objs[ctx.r(#ctx.objs)] }, nil, 0.003) end,
  function(ctx)
    if #ctx.wrappers == 0 then return socket.sleep(0.001) end -- (under cosock.sim)
    local w = ctx.wrappers[ctx.r(#ctx.wrappers)]
    ctx.sender:sendto("x", "127.0.0.1", w.port)
    coroutine.yield({ w }, nil, 0.003)
  end,
  function(ctx)                                -- every wrapper at once: many fds polled
    if #ctx.wrappers == 0 then return socket.sleep(0.001) end -- (under cosock.sim)
    for _ = 1, ctx.r(4) do
      local w = ctx.wrappers[ctx.r(#ctx.wrappers)]
      ctx.sender:sendto("x", "127.0.0.1", w.port)
    end
    coroutine.yield(ctx.wrappers, nil, 0.003)
  end,
  function() socket.sleep(0.001) end,
  function(ctx) ctx.rx:receive() end,
  function(ctx) ctx.tx:send("step") end,
  function(ctx)
    -- (not under cosock.sim until issue 35's item 1 is fixed there: a
    -- predicate wait can stop the virtual clock)
    if ctx.sim then return socket.sleep(0.001) end
    when.wait(function() hook(ctx, "predicate") return ctx.r(3) == 1 end, 0.003)
  end,
  function(ctx) op.perform(op.choice(op.recv(ctx.rx2), op.sleep(0.001))) end,
  function(ctx) op.perform(op.choice(op.send(ctx.tx2, "op"), op.sleep(0.001))) end,
  function(ctx) signal.wait("reentry", 0.002) end,
  function(ctx)
    local h = ctx.handles[ctx.r(#ctx.handles)]
    if h then h:join(0.002) end
  end,
  function() error("a task raised") end,
  function(ctx)                                -- a hog, for the watchdog's reporter
    local now = ctx.sim and os.clock or core.monotime -- (the virtual clock stands still)
    local t = now()
    while now() - t < 0.002 do hook(ctx, "hog") end
  end,
  function(ctx) call(ctx, "a task") end,
  scope_step,
  function(ctx) scope.timeout(0.002, task_body, ctx, 1) end,
  function(ctx)
    if ctx.lock:acquire(0.002) then
      hook(ctx, "holding a lock")
      socket.sleep(0)
      pcall(ctx.lock.release, ctx.lock) -- (a reset between: not held any more)
    end
  end,
  function(ctx)
    if op.choice(ctx.lock:acquire_op(), op.sleep(0.001)):perform() == true then
      hook(ctx, "holding a lock")
      pcall(ctx.lock.release, ctx.lock)
    end
  end,
  -- (an OS-signal receiver is a real descriptor: not under cosock.sim)
  function(ctx) if ctx.sim then socket.sleep(0.001) else ctx.osrx:receive() end end,
  function(ctx) socket.select({ ctx.sim and ctx.u or ctx.osrx }, nil, 0.002) end,
}

function task_body(ctx, n)
  for _ = 1, n do
    -- Once the sequence cancelled its tasks, a scope's task still runs its
    -- cleanup (a handle's cancel of a scope's task cancels the scope): it
    -- takes no new step. (A step's own raw yield is no cancellation point:
    -- it sees a timeout and would go on to the next step, and two such
    -- tasks may wait on one wrapper, which run rightly refuses.)
    if ctx.done then return end
    counts.steps = counts.steps + 1
    STEPS[ctx.r(#STEPS)](ctx)
    hook(ctx, "a task step")
  end
end

local function fresh_run_works()
  local got
  local tx, rx = channel.new()
  cosock.spawn(function() rx:settimeout(1); got = rx:receive() end, "fresh receiver")
  cosock.spawn(function() socket.sleep(0.001); tx:send("fresh") end, "fresh sender")
  cosock.run()
  return got == "fresh" and F.empty()
end

function R.sequence(mode, seed)
  local r = F.new_rng(seed)
  local ctx = { mode = mode, r = r, depth = 0, spawned = 0, handles = {}, kept = {}, objs = {}, wrappers = {},
    closers = {}, failures = {}, scopes = {}, scope_depth = 0, lock = sync.lock() }
  function ctx.fail(msg) ctx.failures[#ctx.failures + 1] = msg end
  cosock.reset()
  if core.dns == "c-ares" then
    assert(socket.dns.configure { servers = { "127.0.0.1:9" }, timeout = 0.01, tries = 1 })
  end
  ctx.osrx = cosock.ossignal.receiver("USR2")
  ctx.osrx:settimeout(0.002)
  ctx.closers[#ctx.closers + 1] = ctx.osrx
  ctx.sim = r(5) == 1
  if ctx.sim then sim.on({ seed = seed, record = false }) end
  ctx.tx, ctx.rx = channel.new(r(2) - 1)
  ctx.rx:settimeout(0.002)
  ctx.tx:settimeout(0.002)
  ctx.tx2, ctx.rx2 = channel.new(0)
  ctx.u = assert(socket.udp())
  ctx.sender = assert(raw.udp())
  ctx.closers[#ctx.closers + 1] = ctx.u
  ctx.closers[#ctx.closers + 1] = ctx.sender
  for i = 1, 3 do ctx.objs[i] = fake(ctx) end
  -- Now and then about as many wrappers as the poller's first event buffer
  -- holds (64): a callback that watches one more fd makes it grow.
  for i = 1, ctx.sim and 0 or r(4) == 1 and 56 + r(12) or 2 do ctx.wrappers[i] = wrapper(ctx) end
  if r(2) == 1 then cosock.set_error_handler(function() hook(ctx, "the error handler") end) end
  if r(3) == 1 then cosock.set_watchdog(0.001, "report", function() hook(ctx, "the watchdog's reporter") end) end
  for _ = 1, r(6) do spawn_task(ctx, r(6), "task") end
  -- Usually run again after each error until run returns; else cancel what
  -- the first error left parked from outside run (callbacks then run there).
  -- Every wait of the workload has a time limit: a stall is a lost wake.
  local patient = r(3) ~= 1
  for _ = 1, 50 do
    local ok, err = pcall(cosock.run)
    if not ok and tostring(err):match("nothing can wake") then
      ctx.fail("run stalled: " .. tostring(err):match("[^\n]*"))
    end
    if ok or not patient then break end
  end
  for _ = 1, #ctx.handles do
    local h = ctx.handles[r(#ctx.handles)]
    pcall(h.cancel, h)
  end
  ctx.done = true                              -- finalizers still to run do nothing
  for _, h in ipairs(ctx.handles) do pcall(h.cancel, h) end
  -- A task cosock.stop spawned (not one of the sequence's handles) may be
  -- still to run: it would cancel the settling's own task. It runs first.
  if ctx.stopped then pcall(cosock.run) end
  F.settle(ctx)
  for _, s in ipairs(ctx.closers) do pcall(s.close, s) end
  cosock.reset()
  ok, err = pcall(fresh_run_works)
  if not ok or not err then ctx.fail("a fresh run after the sequence failed: " .. tostring(err)) end
  if #ctx.failures > 0 then
    error(("%s seed %d: %s"):format(mode, seed, table.concat(ctx.failures, "; ")), 0)
  end
end

-- Runs count sequences of mode from first_seed; raises at the first failure.
function R.run(mode, first_seed, count)
  assert(mode == "reentry" or mode == "finalizer", "mode: reentry or finalizer")
  local saved_print, pause = print, nil
  _G.print = function() end                    -- (stall dumps)
  if mode == "finalizer" then pause = collectgarbage("setpause", 50) end -- (a collector that never rests)
  local ok, err = pcall(function()
    for seed = first_seed, first_seed + count - 1 do R.sequence(mode, seed) end
  end)
  if pause then collectgarbage("setpause", pause) end
  _G.print = saved_print
  cosock.reset()
  if core.dns == "c-ares" then socket.dns.configure {} end
  if not ok then error(err, 0) end
end

if arg and arg[0] and arg[0]:match("reentry%.lua$") then -- lua5.3 test/reentry.lua MODE SEED COUNT
  local mode, seed, count = arg[1] or "reentry", tonumber(arg[2] or 1), tonumber(arg[3] or 100)
  local t0 = os.clock()
  local ok, err = pcall(R.run, mode, seed, count)
  if not ok then
    io.stderr:write("fuzz: ", tostring(err), "\n")
    io.stderr:write(("fuzz: replay with scripts/fuzz.sh --%s --seed %s --count 1\n"):format(
      mode, tostring(err):match("seed (%d+)") or "?"))
    os.exit(1)
  end
  print(("fuzz: %d %s sequences from seed %d passed (%.1f s CPU): %d task steps, %d public calls"
    .. " from callbacks (%d raised), %d finalizers ran"):format(count, mode, seed, os.clock() - t0,
    counts.steps, counts.calls, counts.refused, counts.finalizers))
  if R.errors then
    local list = {}
    for e in pairs(R.errors) do list[#list + 1] = e end
    table.sort(list)
    print(table.concat(list, "\n"))
  end
end

return R
