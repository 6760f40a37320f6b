-- cosock.set_watchdog(seconds [, action [, reporter]]): a task that runs
-- longer than `seconds` without yielding is reported, and with "error"
-- interrupted by an error raised where it runs. doc/accounting-and-watchdog.md
-- is the contract; each `it` below is one of its sentences.
--
-- A hog spins until the watchdog has done something, with a time limit of
-- its own (LIMIT) so that a watchdog that never fires fails the spec instead
-- of hanging it; nothing asserts how long anything took.

local cosock = require "cosock"
local L = require "spec.support.loop"
local V = require "spec.support.version"
local compat = require "cosock.compat"

local LIMIT = 10 -- seconds a hog spins at most
local now = require("cosock.core").monotime

-- Spins until done() is true or LIMIT seconds passed; returns done().
local function spin_until(done)
  local t0 = now()
  while not done() and now() - t0 < LIMIT do end
  return done()
end

-- Spins (without yielding) for s seconds.
local function spin_for(s)
  local t0 = now()
  while now() - t0 < s do end
end

describe("set_watchdog", function()
  local reports

  local function reporter(r) reports[#reports + 1] = r end

  before_each(function()
    cosock.reset()
    reports = {}
  end)
  after_each(function()
    cosock.set_watchdog(nil)
  end)

  it("reports a task that runs too long without yielding, and lets it go on", function()
    cosock.set_watchdog(0.02, nil, reporter)
    local finished
    local h = cosock.spawn(function()
      spin_until(function() return #reports > 0 end)
      L.pass()
      finished = true
    end, "hog")
    cosock.run()
    assert.is_true(finished)
    assert.equal(1, #reports)
    local r = reports[1]
    assert.equal("hog", r.name)
    assert.is_true(rawequal(h, r.handle))
    assert.equal("report", r.action)
    assert.equal(0.02, r.limit)
    assert.is_true(r.seconds >= r.limit)
    assert.matches("^task 'hog' ran [%d.e+-]+ s without yielding$", r.message)
    assert.equal(("task 'hog' ran %.3g s without yielding"):format(r.seconds), r.message)
    assert.is_true(L.has(r.traceback, "stack traceback:"), r.traceback)
    assert.is_true(L.has(r.traceback, "spec/watchdog_spec.lua:"), r.traceback) -- where it spun
    L.assert_clean()
  end)

  it("reports again after each further limit while the task keeps running", function()
    cosock.set_watchdog(0.02, "report", reporter)
    cosock.spawn(function() spin_until(function() return #reports >= 3 end) end, "hog")
    cosock.run()
    assert.equal(3, #reports)
    assert.is_true(reports[2].seconds > reports[1].seconds)
    assert.is_true(reports[3].seconds > reports[2].seconds)
  end)

  it("leaves alone a task that yields before the limit, however long it runs in all", function()
    cosock.set_watchdog(0.05, "error", reporter)
    local turns = 0
    cosock.spawn(function()
      for _ = 1, 50 do
        spin_for(0.002)                        -- (a 25th of the limit per turn)
        turns = turns + 1
        L.pass()
      end
    end, "polite")
    cosock.run()
    assert.equal(50, turns)
    assert.equal(0, #reports)
  end)

  it("names an unnamed task by its coroutine", function()
    cosock.set_watchdog(0.02, nil, reporter)
    local co
    cosock.spawn(function()
      co = coroutine.running()
      spin_until(function() return #reports > 0 end)
    end)
    cosock.run()
    assert.is_nil(reports[1].name)
    assert.equal("task '" .. tostring(co) .. "' ran", reports[1].message:match("^task '.-' ran"))
  end)

  it("writes its report to standard error by default", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(("package.path, package.cpath = %q, %q\n"):format(package.path, package.cpath), [[
local cosock = require "cosock"
local now = require("cosock.core").monotime
cosock.set_watchdog(0.02)
cosock.spawn(function()
  local t0 = now()
  while now() - t0 < 0.1 do end
  print("still running")
end, "busy one")
cosock.run()
print("done")
]])
    f:close()
    local lua = require "spec.support.interpreter"
    local p = io.popen(("timeout 30 %s %s 2>%s.err"):format(lua, script, script))
    local out = p:read("*a")
    p:close()
    local ef = io.open(script .. ".err")
    local err = ef:read("*a")
    ef:close()
    os.remove(script)
    os.remove(script .. ".err")
    assert.equal("still running\ndone\n", out)
    assert.is_true(L.starts(err, "cosock: watchdog: task 'busy one' ran "), err)
    assert.is_true(L.has(err, " s without yielding\nstack traceback:\n"), err)
  end)

  describe("with action 'error'", function()
    it("raises in the task, and run raises it with the task's traceback", function()
      cosock.set_watchdog(0.02, "error", reporter)
      local after = false
      cosock.spawn(function()
        spin_until(function() return false end)
        after = true
      end, "hog")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.is_false(after)
      assert.equal(1, #reports)
      assert.equal("error", reports[1].action)
      -- the error is raised where the task was: its message, then the traceback
      assert.is_true(L.starts(L.loop_error(err), "spec/watchdog_spec.lua:"), err)
      assert.is_true(L.has(err, ": " .. reports[1].message .. "\nstack traceback:\n"), err)
      L.assert_clean()
    end)

    it("goes to the error handler and to join like any error of the task", function()
      cosock.set_watchdog(0.02, "error", function() end)
      local handled, joined
      cosock.set_error_handler(function(err, handle) handled = { err = err, handle = handle } end)
      local hog = cosock.spawn(function() spin_until(function() return false end) end, "hog")
      cosock.spawn(function() joined = compat.pack(hog:join(LIMIT)) end, "joiner")
      cosock.run()
      assert.is_true(rawequal(hog, handled.handle))
      assert.is_true(L.has(handled.err, "task 'hog' ran "), handled.err)
      assert.is_false(joined[1])
      assert.equal(handled.err, joined[2])
      L.assert_clean()
    end)

    it("is caught by a pcall in the task, which then goes on; it fires again after another limit", function()
      cosock.set_watchdog(0.02, "error", reporter)
      local caught = {}
      cosock.spawn(function()
        for i = 1, 2 do
          local ok, err = pcall(spin_until, function() return false end)
          caught[i] = { ok = ok, err = err }
        end
      end, "catcher")
      cosock.run()
      assert.equal(2, #reports)
      for i = 1, 2 do
        assert.is_false(caught[i].ok)
        assert.is_true(L.has(caught[i].err, reports[i].message), caught[i].err)
      end
      assert.is_true(reports[2].seconds > reports[1].seconds)
      L.assert_clean()
    end)
  end)

  it("watches code in a coroutine the task made while it was set", function()
    cosock.set_watchdog(0.02, "error", reporter)
    local ok, err
    cosock.spawn(function()
      local co = coroutine.create(function() spin_until(function() return false end) end)
      ok, err = coroutine.resume(co)
    end, "outer")
    cosock.run()
    assert.is_false(ok)
    assert.is_true(L.has(err, "task 'outer' ran "), err)
    assert.is_true(L.has(reports[1].traceback, "in the coroutine of the task that resumed it:"),
      reports[1].traceback)
  end)

  it("set_watchdog(nil) turns it off", function()
    cosock.set_watchdog(0.01, "error", reporter)
    cosock.set_watchdog(nil)
    local finished
    cosock.spawn(function() spin_for(0.05) finished = true end, "long")
    cosock.run()
    assert.is_true(finished)
    assert.equal(0, #reports)
  end)

  it("is turned off by reset", function()
    cosock.set_watchdog(0.01, "error", reporter)
    cosock.reset()
    local finished
    cosock.spawn(function() spin_for(0.05) finished = true end, "long")
    cosock.run()
    assert.is_true(finished)
    assert.equal(0, #reports)
  end)

  it("keeps a hook the program set on the task's coroutine, and gives it back between resumes", function()
    local lines, co = 0, nil
    local function count() lines = lines + 1 end
    cosock.set_watchdog(5, "error", reporter)
    cosock.spawn(function()
      co = coroutine.running()
      debug.sethook(count, "l")
      L.pass()
      local before = lines
      local x = 1
      x = x + 1
      x = x + 1
      assert(x == 3)
      assert(lines >= before + 3, "the line hook did not run while watched")
      L.pass()
    end, "hooked")
    cosock.spawn(function()
      L.pass()
      if V.jit then return end -- (LuaJIT: one hook for every coroutine: below)
      -- the task is parked: its coroutine has the program's hook again
      local fn, mask = debug.gethook(co)
      assert.equal(count, fn)
      assert.equal("l", mask)
    end, "checker")
    cosock.run()
    assert.is_true(lines > 0)
    if V.jit then
      -- LuaJIT keeps one hook per state, not per coroutine: while any task
      -- runs under the watchdog that hook is the watchdog's; once run
      -- returns the program's is back
      local fn, mask = debug.gethook()
      assert.equal(count, fn)
      assert.equal("l", mask)
    end
    debug.sethook(co)
  end)

  it("still fires for a task whose coroutine has a hook of the program's", function()
    cosock.set_watchdog(0.02, nil, reporter)
    local calls = 0
    cosock.spawn(function()
      debug.sethook(function() calls = calls + 1 end, "", 100000)
      L.pass()
      spin_until(function() return #reports > 0 end)
    end, "hooked")
    cosock.run()
    assert.equal(1, #reports)
    assert.is_true(calls > 0)
  end)

  it("leaves a hook the program sets while it runs", function()
    cosock.set_watchdog(5, nil, reporter)
    local co
    local function mine() end
    cosock.spawn(function()
      co = coroutine.running()
      debug.sethook(mine, "r")
      L.pass()
    end, "sets")
    cosock.run()
    local fn, mask = debug.gethook(co)
    assert.equal(mine, fn)
    assert.equal("r", mask)
    debug.sethook(co) -- (on LuaJIT that hook is every coroutine's)
  end)

  it("takes the hook off a coroutine made in a watched task once it runs outside one", function()
    cosock.set_watchdog(5, nil, reporter)
    local co
    cosock.spawn(function()
      co = coroutine.create(function()
        coroutine.yield()
        local x = 0
        for i = 1, 5000 do x = x + i end
        return x
      end)
      coroutine.resume(co)
    end, "maker")
    cosock.run()
    if V.jit then
      -- (LuaJIT: one hook per state; run gave the program's, none, back)
      assert.is_nil(debug.gethook(co))
    else
      assert.is_not_nil(debug.gethook(co))     -- Lua copied the task's hook into it
    end
    cosock.set_watchdog(nil)
    assert.is_true((coroutine.resume(co)))
    assert.is_nil(debug.gethook(co))
  end)

  it("sets no hook when no watchdog is set", function()
    local hook = "unset"
    cosock.spawn(function() hook = debug.gethook() end, "t")
    cosock.run()
    assert.is_nil(hook)
  end)

  it("does not watch the setwaker calls the loop makes for a task", function()
    cosock.set_watchdog(0.01, "error", reporter)
    local slow = { setwaker = function(_, _, fn) if fn then spin_for(0.05) end end }
    local h = cosock.spawn(function() coroutine.yield({ slow }, nil, 0) end, "waits")
    cosock.run()
    assert.equal(0, #reports)
    assert.is_false(h:is_alive())
  end)

  -- A limit of 50 ms: the task's own loop after the resume must stay under
  -- it (under qemu on a busy machine it took over 10 ms, a second report).
  it("catches time spent in a coroutine made outside the task at the next look in the task", function()
    local outside = coroutine.create(function() spin_for(0.15) end)
    cosock.set_watchdog(0.05, nil, reporter)
    cosock.spawn(function()
      coroutine.resume(outside)                -- not watched while it runs
      local x = 0
      for i = 1, 5000 do x = x + i end         -- the task's own instructions
      return x
    end, "resumer")
    cosock.run()
    if V.jit then
      -- LuaJIT's hook is every coroutine's: the watchdog looks while the
      -- other coroutine runs too, and reports after each limit as for a task
      -- that keeps running
      assert.is_true(#reports >= 1)
      for _, r in ipairs(reports) do assert.equal("resumer", r.name) end
    else
      assert.equal(1, #reports)
    end
    assert.equal("resumer", reports[1].name)
    assert.is_true(reports[1].seconds >= 0.05)
  end)

  describe("changed while a task runs", function()
    it("a new limit set by a watched task counts from the start of its turn", function()
      cosock.set_watchdog(60, nil, reporter)
      cosock.spawn(function()
        spin_for(0.02)
        cosock.set_watchdog(0.01, nil, reporter)
        spin_until(function() return #reports > 0 end)
      end, "t")
      cosock.run()
      assert.equal(1, #reports)
      assert.equal(0.01, reports[1].limit)
    end)

    it("nil turns it off for the rest of the current turn too", function()
      cosock.set_watchdog(0.01, "error", reporter)
      local finished
      cosock.spawn(function()
        cosock.set_watchdog(nil)
        spin_for(0.05)
        finished = true
      end, "t")
      cosock.run()
      assert.is_true(finished)
      assert.equal(0, #reports)
    end)

    it("a task that sets one while none was set is watched from its next turn", function()
      local first_done
      cosock.spawn(function()
        cosock.set_watchdog(0.01, nil, reporter)
        spin_for(0.05)                         -- this turn is not watched
        first_done = #reports
        L.pass()
        spin_until(function() return #reports > 0 end)
      end, "t")
      cosock.run()
      assert.equal(0, first_done)
      assert.equal(1, #reports)
    end)
  end)

  describe("the reporter", function()
    it("raises in the task what it raises", function()
      cosock.set_watchdog(0.01, "report", function() error("reporter says no", 0) end)
      local ok, err
      cosock.spawn(function() ok, err = pcall(spin_until, function() return false end) end, "t")
      cosock.run()
      assert.is_false(ok)
      assert.equal("reporter says no", err)
    end)

    it("cannot yield: that is an error in the task", function()
      cosock.set_watchdog(0.01, "report", function() coroutine.yield() end)
      local ok, err
      cosock.spawn(function() ok, err = pcall(spin_until, function() return false end) end, "t")
      cosock.run()
      assert.is_false(ok)
      assert.is_true(L.has(err, "yield"), err)
    end)

    it("may read the metadata and stats, spawn, cancel and turn the watchdog off", function()
      local seen = {}
      local victim = cosock.spawn(function() L.yield(nil, nil, 60) end, "victim")
      cosock.set_watchdog(0.01, "error", function(r)
        seen.meta = #cosock.get_thread_metadata()
        seen.tasks = cosock.stats().tasks
        cosock.spawn(function() seen.spawned = true end, "spawned")
        victim:cancel()
        cosock.set_watchdog(nil)
        seen.name = r.name
      end)
      local finished
      cosock.spawn(function()
        spin_until(function() return seen.name ~= nil end)
        finished = true                        -- turned off before the error: none raised
      end, "hog")
      cosock.run()
      assert.same({ meta = 2, tasks = 2, spawned = true, name = "hog" }, seen)
      assert.is_true(finished)
      assert.is_false(victim:is_alive())
      L.assert_clean()
    end)
  end)

  describe("bad arguments", function()
    local function fails(msg, ...)
      local ok, err = pcall(cosock.set_watchdog, ...)
      assert.is_false(ok)
      assert.equal(msg, err)
    end

    it("seconds: a number or nil", function()
      fails("bad argument #1 to 'set_watchdog' (number or nil expected, got string)", "1")
      fails("bad argument #1 to 'set_watchdog' (number or nil expected, got table)", {})
      fails("bad argument #1 to 'set_watchdog' (number or nil expected, got boolean)", true)
    end)

    it("seconds: finite and > 0", function()
      fails("bad argument #1 to 'set_watchdog' (finite number > 0 expected, got 0)", 0)
      fails("bad argument #1 to 'set_watchdog' (finite number > 0 expected, got -1)", -1)
      fails("bad argument #1 to 'set_watchdog' (finite number > 0 expected, got " .. tostring(0 / 0) .. ")", 0 / 0)
      fails("bad argument #1 to 'set_watchdog' (finite number > 0 expected, got inf)", math.huge)
    end)

    it("action: 'report' or 'error'", function()
      fails("bad argument #2 to 'set_watchdog' ('report' or 'error' expected, got 'stop')", 1, "stop")
      fails("bad argument #2 to 'set_watchdog' ('report' or 'error' expected, got number)", 1, 2)
    end)

    it("reporter: a function or nil", function()
      fails("bad argument #3 to 'set_watchdog' (function or nil expected, got string)", 1, "error", "f")
      fails("bad argument #3 to 'set_watchdog' (function or nil expected, got table)", 1, nil, {})
    end)

    it("accepts a limit of more than a year (taken as a year, so no overflow)", function()
      assert.has_no.errors(function() cosock.set_watchdog(1e12) end)
      cosock.set_watchdog(1e12, nil, reporter)
      cosock.spawn(function() L.pass() end, "t")
      cosock.run()
      assert.equal(0, #reports)
    end)

    it("a refused call changes nothing", function()
      cosock.set_watchdog(0.02, nil, reporter)
      pcall(cosock.set_watchdog, 0, "error")
      cosock.spawn(function() spin_until(function() return #reports > 0 end) end, "hog")
      cosock.run()
      assert.equal(1, #reports)
      assert.equal("report", reports[1].action)
    end)
  end)
end)
