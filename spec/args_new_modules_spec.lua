-- Issue 35: the argument checks of the newer modules (cosock.scope,
-- cosock.sync, cosock.ossignal, cosock.signal, cosock.stop) and of the
-- channel ends' methods, at the standard of the older ones: an unknown
-- option key, NaN, an infinity, a fraction where a count is meant, a method
-- called with a dot, each gives a clear error naming the function and the
-- argument. One table of (call, message); each call runs in a task.

local cosock = require "cosock"
local scope = require "cosock.scope"
local sync = require "cosock.sync"
local signal = require "cosock.signal"
local net = require "spec.support.net"

local NaN, inf = 0 / 0, math.huge
local function fn() end

-- Objects the calls use, made in the task (fresh for each case).
local function objects()
  local o = {}
  o.lock, o.sem = sync.lock(), sync.semaphore(2)
  o.tx, o.rx = cosock.channel.new()
  o.osrx = cosock.ossignal.receiver("USR2")
  return o
end

-- { name, function(o, s) (s: a scope the call runs in) , message (plain text) }
local CASES = {
  -- cosock.scope
  { "run: unknown option", function() scope.run({ timout = 5 }, fn) end,
    "cosock.scope.run: unknown option 'timout' (timeout, deadline or grace expected)" },
  { "run: option timeout NaN", function() scope.run({ timeout = NaN }, fn) end,
    "cosock.scope.run: option timeout must be a number of seconds (got NaN)" },
  { "run: option timeout a string", function() scope.run({ timeout = "1" }, fn) end,
    "cosock.scope.run: option timeout must be a number of seconds (got string)" },
  { "run: option deadline NaN", function() scope.run({ deadline = NaN }, fn) end,
    "cosock.scope.run: option deadline must be a time of cosock.timer.now() (got NaN)" },
  { "run: option grace negative", function() scope.run({ grace = -1 }, fn) end,
    "cosock.scope.run: option grace must be a number of seconds >= 0 (got -1)" },
  { "run: option grace NaN", function() scope.run({ grace = NaN }, fn) end,
    "cosock.scope.run: option grace must be a number of seconds >= 0 (got NaN)" },
  { "run: a number for fn", function() scope.run(42) end,
    "bad argument #1 to 'run' (function or table of options expected, got number)" },
  { "run: options and no fn", function() scope.run({}) end,
    "bad argument #2 to 'run' (function expected, got nil)" },
  { "timeout: NaN", function() scope.timeout(NaN, fn) end,
    "bad argument #1 to 'timeout' (number expected, got NaN)" },
  { "timeout: a string", function() scope.timeout("1", fn) end,
    "bad argument #1 to 'timeout' (number expected, got string)" },
  { "timeout: no fn", function() scope.timeout(1) end,
    "bad argument #2 to 'timeout' (function expected, got nil)" },
  { "s.defer(fn)", function(_, s) s.defer(fn) end,
    "bad self to 'defer' (cosock.scope expected, got function)" },
  { "s.spawn(fn)", function(_, s) s.spawn(fn) end,
    "bad self to 'spawn' (cosock.scope expected, got function)" },
  { "s.cancel()", function(_, s) s.cancel() end, "bad self to 'cancel' (cosock.scope expected, got nil)" },
  { "s.is_cancelled()", function(_, s) s.is_cancelled() end,
    "bad self to 'is_cancelled' (cosock.scope expected, got nil)" },
  { "s.deadline()", function(_, s) s.deadline() end,
    "bad self to 'deadline' (cosock.scope expected, got nil)" },
  { "s.wait_op()", function(_, s) s.wait_op() end, "bad self to 'wait_op' (cosock.scope expected, got nil)" },
  { "s:defer(42)", function(_, s) s:defer(42) end, "bad argument #1 to 'defer' (function expected, got number)" },
  { "s:spawn(42)", function(_, s) s:spawn(42) end, "bad argument #1 to 'spawn' (function expected, got number)" },
  -- cosock.sync
  { "semaphore(inf)", function() sync.semaphore(inf) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got " .. tostring(inf) .. ")" },
  { "semaphore(-inf)", function() sync.semaphore(-inf) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got " .. tostring(-inf) .. ")" },
  { "semaphore(NaN)", function() sync.semaphore(NaN) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got NaN)" },
  { "semaphore(1.5)", function() sync.semaphore(1.5) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got 1.5)" },
  { "semaphore(0)", function() sync.semaphore(0) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got 0)" },
  { "semaphore(2^60)", function() sync.semaphore(2 ^ 60) end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got " .. tostring(2 ^ 60) .. ")" },
  { "semaphore('2')", function() sync.semaphore("2") end,
    "bad argument #1 to 'semaphore' (integer >= 1 expected, got string)" },
  { "semaphore(2, 1)", function() sync.semaphore(2, 1) end,
    "bad argument #2 to 'semaphore' (no argument expected, got number)" },
  { "lock(5)", function() sync.lock(5) end, "bad argument #1 to 'lock' (no argument expected, got number)" },
  { "lock:acquire(NaN)", function(o) o.lock:acquire(NaN) end,
    "bad argument #1 to 'acquire' (number or nil expected, got NaN)" },
  { "lock:acquire('1')", function(o) o.lock:acquire("1") end,
    "bad argument #1 to 'acquire' (number or nil expected, got string)" },
  { "sem:release(2)", function(o) assert(o.sem:acquire()); o.sem:release(2) end,
    "bad argument #1 to 'release' (no argument expected, got number)" },
  { "lock:acquire_op(1)", function(o) o.lock:acquire_op(1) end,
    "bad argument #1 to 'acquire_op' (no argument expected, got number)" },
  { "lock.acquire()", function(o) o.lock.acquire() end,
    "bad self to 'acquire' (cosock.sync lock or semaphore expected, got nil)" },
  { "lock.acquire(5)", function(o) o.lock.acquire(5) end,
    "bad self to 'acquire' (cosock.sync lock or semaphore expected, got number)" },
  { "lock.release()", function(o) o.lock.release() end,
    "bad self to 'release' (cosock.sync lock or semaphore expected, got nil)" },
  { "lock.held()", function(o) o.lock.held() end,
    "bad self to 'held' (cosock.sync lock or semaphore expected, got nil)" },
  { "lock.available()", function(o) o.lock.available() end,
    "bad self to 'available' (cosock.sync lock or semaphore expected, got nil)" },
  { "sem.acquire_op()", function(o) o.sem.acquire_op() end,
    "bad self to 'acquire_op' (cosock.sync lock or semaphore expected, got nil)" },
  -- cosock.ossignal
  { "rx.receive()", function(o) o.osrx.receive() end,
    "bad self to 'receive' (cosock.ossignal receiver expected, got nil)" },
  { "rx.close()", function(o) o.osrx.close() end,
    "bad self to 'close' (cosock.ossignal receiver expected, got nil)" },
  { "rx.settimeout(1)", function(o) o.osrx.settimeout(1) end,
    "bad self to 'settimeout' (cosock.ossignal receiver expected, got number)" },
  { "rx.setwaker('recvr', fn)", function(o) o.osrx.setwaker("recvr", fn) end,
    "bad self to 'setwaker' (cosock.ossignal receiver expected, got string)" },
  { "rx._wake('recvr')", function(o) o.osrx._wake("recvr") end,
    "bad self to '_wake' (cosock.ossignal receiver expected, got string)" },
  { "rx:settimeout(NaN)", function(o) o.osrx:settimeout(NaN) end,
    "bad argument #1 to 'settimeout' (number or nil expected, got NaN)" },
  { "rx:settimeout('1')", function(o) o.osrx:settimeout("1") end,
    "bad argument #1 to 'settimeout' (number or nil expected, got string)" },
  { "receiver()", function() cosock.ossignal.receiver() end, "cosock.ossignal.receiver: no signal named" },
  { "receiver(15)", function() cosock.ossignal.receiver(15) end,
    "bad argument #1 to 'receiver' (unknown signal '15'" },
  -- cosock.signal
  { "signal.wait(nil)", function() signal.wait(nil) end,
    "bad argument #1 to 'wait' (signal name expected, got nil)" },
  { "signal.one(NaN)", function() signal.one(NaN) end, "bad argument #1 to 'one' (signal name expected, got NaN)" },
  { "signal.wait('x', NaN)", function() signal.wait("x", NaN) end,
    "bad argument #2 to 'wait' (number >= 0 or nil expected, got NaN)" },
  { "signal.wait('x', -1)", function() signal.wait("x", -1) end,
    "bad argument #2 to 'wait' (number >= 0 or nil expected, got -1)" },
  { "signal.on('x', 42)", function() signal.on("x", 42) end,
    "bad argument #2 to 'on' (function expected, got number)" },
  -- cosock.stop
  { "stop(5)", function() cosock.stop(5) end, "bad argument #1 to 'stop' (no argument expected, got number)" },
  -- channel ends (C: src/features/channel.c)
  { "rx.receive()", function(o) o.rx.receive() end,
    "bad argument #1 to 'receive' (cosock.channel receiver expected, got nil)" },
  { "rx.close()", function(o) o.rx.close() end,
    "bad argument #1 to 'close' (cosock.channel receiver expected, got nil)" },
  { "tx.send(1)", function(o) o.tx.send(1) end,
    "bad argument #1 to 'send' (cosock.channel sender expected, got number)" },
  { "tx.close()", function(o) o.tx.close() end,
    "bad argument #1 to 'close' (cosock.channel sender expected, got nil)" },
  { "rx.settimeout(1)", function(o) o.rx.settimeout(1) end,
    "bad argument #1 to 'settimeout' (cosock.channel receiver expected, got number)" },
  { "rx:settimeout(NaN)", function(o) o.rx:settimeout(NaN) end,
    "bad argument #1 to 'settimeout' (number expected, got " },
}

describe("argument checks of the newer modules", function()
  before_each(function() cosock.reset() end)

  for _, case in ipairs(CASES) do
    local name, call, message = case[1], case[2], case[3]
    it(name .. " raises " .. message, function()
      local r = net.in_task(function()
        local o = objects()
        local ok, pok, err = scope.run(function(s) return pcall(call, o, s) end)
        o.osrx:close()
        return ok, pok, err
      end)
      assert.is_true(r[1])
      local ok, err = r[2], r[3]
      assert.is_false(ok, "no error")
      assert.equal("string", type(err))
      assert.truthy(err:find(message, 1, true), ("%q has no %q"):format(err, message))
      net.assert_clean()
    end)
  end
end)
