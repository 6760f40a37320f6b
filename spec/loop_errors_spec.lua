-- Conformance: errors raised by tasks, and the loop's own "nothing can wake
-- anyone" error with its state dump.

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local STUCK = "cosock tried to call socket.select with no sockets and no timeout"

describe("errors out of run", function()
  before_each(function()
    cosock.reset()
  end)

  it("a string error comes out as cosock.lua's position, the message and the task's traceback", function()
    cosock.spawn(function() error("boom-message", 0) end, "raiser")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.equal("string", type(err))
    assert.is_true(L.starts(L.loop_error(err), "boom-message"), err)
    assert.is_true(L.has(err, "stack traceback:"), err)
  end)

  it("the traceback is the task's own (it names the failing function's frame)", function()
    local function deep_failing_function()
      error("deep", 0)
    end
    cosock.spawn(function()
      L.pass()
      deep_failing_function()
    end, "raiser")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "deep"), err)
    assert.is_true(L.has(err, "deep_failing_function"), err)
  end)

  it("an error with position information keeps it", function()
    cosock.spawn(function() error("with-pos") end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.has(err, "loop_errors_spec.lua"), err)
    assert.is_true(L.has(err, "with-pos"), err)
    assert.is_true(L.has(err, "stack traceback:"), err)
  end)

  it("a table error comes out as the very same table", function()
    local e = { code = 42 }
    cosock.spawn(function() error(e) end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(rawequal(e, err))
  end)

  it("a table error raised after a yield comes out as the same table", function()
    local e = setmetatable({}, { __tostring = function() return "E" end })
    cosock.spawn(function()
      L.pass()
      error(e)
    end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(rawequal(e, err))
  end)

  it("error() with no value comes out as a traceback string", function()
    cosock.spawn(function() error() end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.equal("string", type(err))
    assert.is_true(L.has(err, "stack traceback:"), tostring(err))
  end)

  it("a number error comes out as a string starting with the number", function()
    -- (level 0: the number itself on every Lua; before 5.3 error() would
    -- prefix a position to a number as to a string)
    cosock.spawn(function() error(42, 0) end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.equal("string", type(err))
    assert.is_true(L.starts(L.loop_error(err), "42"), tostring(err))
  end)

  it("the failed task is dead and removed", function()
    local h = cosock.spawn(function() error("x", 0) end)
    assert.is_false(pcall(cosock.run))
    assert.is_false(h:is_alive())
    assert.equal(0, L.stats().tasks)
    cosock.run()
    L.assert_clean()
  end)

  it("other tasks are not resumed again in that run, but a later run resumes them", function()
    local a = L.obj("a")
    local r
    cosock.spawn(function() r = compat.pack(L.yield({ a }, nil, 5)) end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      a:fire() -- waiter is now ready for the next pass
      error("stop here", 0)
    end, "raiser")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "stop here"))
    assert.is_nil(r) -- not resumed in the run that raised
    cosock.run()
    assert.is_not_nil(r)
    assert.same({ a }, r[1])
    assert.is_nil(r[3])
    L.assert_clean()
  end)

  it("tasks due in the same pass as the failing one run exactly once over the next run", function()
    local ran = {}
    for i = 1, 5 do
      if i == 3 then
        cosock.spawn(function() error("three", 0) end, "t3")
      else
        cosock.spawn(function() ran[i] = (ran[i] or 0) + 1 end, "t" .. i)
      end
    end
    local ok = pcall(cosock.run)
    assert.is_false(ok)
    cosock.run()
    for _, i in ipairs({ 1, 2, 4, 5 }) do
      assert.equal(1, ran[i], "task " .. i)
    end
    L.assert_clean()
  end)

  it("a sleeping task keeps its timer across a failed run", function()
    local r
    cosock.spawn(function() r = compat.pack(L.yield(nil, nil, 0.05)) end, "sleeper")
    cosock.spawn(function() error("fail", 0) end, "raiser")
    assert.is_false(pcall(cosock.run))
    cosock.run()
    assert.is_not_nil(r)
    assert.equal("timeout", r[3])
    L.assert_clean()
  end)

  describe("no sockets and no timeout", function()
    it("raises an error beginning with the documented text", function()
      local a = L.obj("a")
      cosock.spawn(function() L.yield({ a }) end, "stuck-task")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.equal("string", type(err))
      assert.is_true(L.starts(L.loop_error(err), STUCK), err)
    end)

    it("run's error: cosock's first line (after cosock.lua's position), then cosock-native's, then each task", function()
      cosock.spawn(function() L.yield({ L.obj("a") }, { L.obj("b"), L.obj("c") }) end, "stuck-task")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      local lines = {}
      for line in (L.loop_error(err) .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
      assert.same({
        STUCK .. ". this is a bug, please report it, including the above dump state",
        "cosock-native: every live task waits on something that nothing can wake (no socket, no timeout); "
          .. "the dump above shows what each one waits on (the line above is cosock 0.2.0's, kept "
          .. "word for word: a stall is the program's tasks waiting for each other or for what was "
          .. "closed, doc/deadlock-report.md)",
        "  task 'stuck-task' waits for fake(a) to be readable; for fake(b) to be writable; "
          .. "for fake(c) to be writable",
      }, lines)
    end)

    it("core.run's error is cosock's first line word for word; cosock-native's words follow it", function()
      local core = require "cosock.core"
      cosock.spawn(function() L.yield({ L.obj("a") }) end, "stuck-task")
      local _, ok, err = L.capture(core.run)
      assert.is_false(ok)
      local first, rest = err:match("^([^\n]*)\n(.*)$")
      assert.equal(STUCK .. ". this is a bug, please report it, including the above dump state", first)
      assert.matches("^cosock%-native: every live task waits on something that nothing can wake", rest)
    end)

    -- (The dump printed to stdout: spec/stall_dump_spec.lua.)
    it("names the stuck task in the error", function()
      local a, b = L.obj("a"), L.obj("b")
      cosock.spawn(function() L.yield({ a }, { b }) end, "stuck-task-name-7741")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.starts(L.loop_error(err), STUCK), tostring(err))
      assert.is_true(L.has(err, "task 'stuck-task-name-7741' waits"), err)
    end)

    it("a task yielding nothing at all (plain coroutine.yield()) is stuck", function()
      cosock.spawn(function() coroutine.yield() end, "bare-yield")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.starts(L.loop_error(err), STUCK), tostring(err))
      assert.is_true(L.has(err, "task 'bare-yield' waits on nothing (it yielded no object and no timeout)"), err)
    end)

    it("empty recvt and sendt tables with no timeout are stuck", function()
      cosock.spawn(function() L.yield({}, {}) end, "empty-tables")
      local _, ok, err = L.capture(cosock.run)
      assert.is_false(ok)
      assert.is_true(L.starts(L.loop_error(err), STUCK), tostring(err))
    end)

    it("is not raised while another task has a timeout", function()
      local a = L.obj("a")
      local r
      cosock.spawn(function() r = compat.pack(L.yield({ a })) end, "waiter")
      cosock.spawn(function()
        L.yield(nil, nil, 0.02)
        a:fire()
      end, "timer")
      cosock.run()
      assert.same({ a }, r[1])
      L.assert_clean()
    end)

    it("after the error a fresh spawn + run works", function()
      cosock.spawn(function() L.yield({ L.obj("x") }) end, "stuck")
      local _, ok = L.capture(cosock.run)
      assert.is_false(ok)
      cosock.reset()
      L.assert_loop_works()
    end)
  end)
end)

describe("the loop's fixed words (cosock.core.messages)", function()
  it("are the words the C objects and the Lua objects raise alike", function()
    local core = require "cosock.core"
    local M = core.messages
    assert.equal("unsupported wake kind: ", M.wake_kind)
    assert.equal("cosock: out of memory", M.no_memory)
    local tx, rx = cosock.channel.new()
    local t = cosock.timer.create_oneshot(10)
    local sock = cosock.socket.udp()
    local f = function() end
    for name, obj in pairs({ channel = rx, timer = t, udp = sock }) do
      local ok, err = pcall(obj.setwaker, obj, "bogus", f)
      assert.is_false(ok, name)
      assert.truthy(tostring(err):find(M.wake_kind .. "bogus", 1, true), name .. ": " .. tostring(err))
    end
    t:cancel()
    sock:close()
    tx:close()
  end)
end)
