-- The re-entrancy contract (doc/reliability.md): Lua that the loop runs from
-- its C code may call any public function; the call works, or raises a clear
-- error naming what is not allowed there, and the loop is never corrupted.
-- Each callback point below calls each public call that matters once; after
-- each, the loop is reset and must work. Where the outcome is fixed, it is
-- asserted: reset and run are refused inside run (and inside the setwaker
-- calls of a cancel made outside run); spawn and cancel work everywhere.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local V = require "spec.support.version"

local socket = cosock.socket

-- Each arranges for fn to be called once from its callback point, runs what
-- it needs, and returns whether it was called.
local POINTS = {}

-- A task parked on an object whose setwaker calls fn the first time
-- clearing(waker) says (waker: a new waker; nil: the wait ends).
local function via_setwaker(clearing)
  return function(fn)
    local called = false
    local o = {}
    function o.setwaker(_, _, waker)
      if clearing(waker) and not called then called = true; fn() end
    end
    cosock.spawn(function() coroutine.yield({ o }, nil, 0.001) end, "waiter")
    pcall(cosock.run)
    return called
  end
end
POINTS["setwaker while parking"] = via_setwaker(function(waker) return waker ~= nil end)
POINTS["setwaker(nil) before a resume"] = via_setwaker(function(waker) return waker == nil end)

POINTS["setwaker(nil) of a cancel outside run"] = function(fn)
  local called = false
  local o = {}
  function o.setwaker(_, _, waker)
    if not waker and not called then called = true; fn() end
  end
  local h = cosock.spawn(function() coroutine.yield({ o }, nil, nil) end, "waiter")
  cosock.spawn(function() error("stop") end, "stopper")
  assert(not pcall(cosock.run))
  pcall(h.cancel, h)
  return called
end

POINTS["_wake of a polled object"] = function(fn)
  local called = false
  local a, b = L.tcp_pair()
  local w = L.wrap(a, "wrapped")
  local wake = w._wake
  function w._wake(self, kind)
    if not called then called = true; fn() end
    return wake(self, kind)
  end
  assert(b:send("x"))
  cosock.spawn(function() coroutine.yield({ w }, nil, 1) end, "waiter")
  pcall(cosock.run)
  a:close(); b:close()
  return called
end

POINTS["a predicate"] = function(fn)
  local called = false
  cosock.spawn(function()
    cosock.when.wait(function()
      if not called then called = true; fn() end
      return true
    end, 1)
  end, "waiter")
  pcall(cosock.run)
  return called
end

POINTS["the error handler"] = function(fn)
  local called = false
  cosock.set_error_handler(function()
    if not called then called = true; fn() end
  end)
  cosock.spawn(function() error("raised") end, "raiser")
  pcall(cosock.run)
  cosock.set_error_handler(nil)
  return called
end

POINTS["the watchdog's reporter"] = function(fn)
  local called = false
  cosock.set_watchdog(0.001, "report", function()
    if not called then called = true; fn() end
  end)
  cosock.spawn(function()
    local t = core.monotime()
    while not called and core.monotime() - t < 2 do end
  end, "hog")
  pcall(cosock.run)
  cosock.set_watchdog(nil)
  return called
end

POINTS["a finalizer inside spawn"] = function(fn)
  local called, i = false, 0
  -- Earlier cases leave objects whose finalizers are still queued (the
  -- collector runs a few per step, oldest first): a full collection runs
  -- them now, so that this case's own come first.
  collectgarbage("restart")
  collectgarbage()
  collectgarbage()
  local pause = collectgarbage("setpause", 10) -- (a cycle soon: the finalizer runs sooner)
  while not called and i < 1000000 do
    i = i + 1
    V.garbage(function()
      if not called then called = true; fn() end
    end)
    cosock.spawn(function() end, "filler")
  end
  collectgarbage("setpause", pause)
  pcall(cosock.run)
  return called
end

-- Inside run (where reset and run are refused with the running message).
local INSIDE_RUN = {
  ["setwaker while parking"] = true, ["setwaker(nil) before a resume"] = true,
  ["_wake of a polled object"] = true, ["a predicate"] = true, ["the error handler"] = true,
  ["the watchdog's reporter"] = true,
}

-- The calls: each returns a check of its outcome (ok, err) at a point.
local CALLS = {}
CALLS.reset = function() return pcall(cosock.reset) end
CALLS.run = function() return pcall(cosock.run) end
CALLS.spawn = function(st)
  return pcall(function() st.spawned = cosock.spawn(function() st.spawned_ran = true end, "spawned") end)
end
CALLS.cancel = function(st) return pcall(st.other.cancel, st.other) end
CALLS.sleep = function() return pcall(socket.sleep, 0) end
CALLS.select = function() return pcall(socket.select, {}, nil, 0) end
CALLS.lookup = function() return pcall(socket.dns.toip, "127.0.0.1") end
CALLS.perform = function()
  local op = require "cosock.op"
  return pcall(op.perform, op.always(1))
end

describe("re-entrancy contract", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    cosock.set_watchdog(nil)
    cosock.set_error_handler(nil)
    cosock.reset()
  end)

  for point, arrange in pairs(POINTS) do
    for name, call in pairs(CALLS) do
      it(name .. " from " .. point, function()
        local st, out = {}, nil
        -- another task for cancel, parked until it is cancelled or reset (or
        -- a run the call makes ends it: no outcome depends on that time)
        st.other = cosock.spawn(function() coroutine.yield(nil, nil, 0.2) end, "other")
        local called = arrange(function()
          out = { call(st) }
          pcall(st.other.cancel, st.other)     -- (so that run ends now)
        end)
        assert.is_true(called, "the callback point was never reached")
        if out == nil then
          -- A wait yields out of the predicate's evaluation: the loop stops
          -- it there (the waiting task raises "a predicate must not yield").
          assert.are.equal("a predicate", point)
          assert.is_true(name == "sleep" or name == "select")
          out = { true }
          st.other:cancel()
        end
        local ok, err = out[1], out[2]
        if not ok then
          assert.is_string(err)                -- a clear error, never a crash
          local what = err:match("cosock[^:]*%.lua:%d+: attempt to (%a+)")
          assert.is_true(what == nil or what == "yield", err)
        end
        if name == "reset" or name == "run" then
          if INSIDE_RUN[point] then
            assert.is_false(ok)
            assert.matches(name == "reset" and "cannot reset while the loop is running"
              or "the loop is already running", err)
          elseif point == "setwaker(nil) of a cancel outside run" then
            assert.is_false(ok)
            assert.matches("cannot " .. name .. " inside the setwaker calls of handle:cancel%(%) %(task 'waiter'%)", err)
          end
        elseif name == "spawn" then
          assert.is_true(ok, err)
        elseif name == "cancel" then
          assert.is_true(ok, err)
        end
        assert.is_false(st.other:is_alive())
        -- whatever happened: the rest of the loop runs, and then it works
        pcall(function() st.other:cancel() end)
        pcall(cosock.run)
        if name == "spawn" and ok and st.spawned:is_alive() then
          cosock.run()
        end
        if name == "spawn" and ok then assert.is_true(st.spawned_ran or not st.spawned:is_alive()) end
        cosock.set_watchdog(nil)
        cosock.set_error_handler(nil)
        cosock.reset()
        L.assert_loop_works()
      end)
    end
  end
end)
