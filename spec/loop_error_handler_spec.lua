-- cosock.set_error_handler(fn): a task's error goes to fn(err, handle) and the
-- loop goes on; an error of fn's ends run; nil restores cosock's behaviour;
-- reset clears it. (Not in cosock 0.2.0: an addition.)

local cosock = require "cosock"
local L = require "spec.support.loop"

describe("cosock.set_error_handler", function()
  before_each(function()
    cosock.reset()
  end)

  it("gets the error as run would raise it and the task's handle; the others go on", function()
    local seen, finished = {}, {}
    cosock.set_error_handler(function(err, handle)
      seen[#seen + 1] = { err = err, handle = handle }
    end)
    local bad = cosock.spawn(function() L.pass(); error("bad thing") end, "bad")
    for i = 1, 3 do
      cosock.spawn(function() L.passes(3); finished[i] = true end, "good" .. i)
    end
    cosock.run()
    assert.same({ true, true, true }, finished)
    assert.equal(1, #seen)
    assert.is_true(rawequal(bad, seen[1].handle))
    assert.is_true(L.starts(seen[1].err, "spec/loop_error_handler_spec.lua:"), seen[1].err)
    assert.is_true(L.has(seen[1].err, "bad thing\nstack traceback:"), seen[1].err)
    assert.is_false(bad:is_alive())
    L.assert_clean()
  end)

  it("gives the traceback text run raises without a handler (after run's own position)", function()
    local function fail() error("same text") end
    local function spawn_fail() cosock.spawn(fail, "a") end -- (one spawn site for both)
    spawn_fail()
    local _, raised = pcall(cosock.run)
    cosock.reset()
    local handled
    cosock.set_error_handler(function(err) handled = err end)
    spawn_fail()
    cosock.run()
    assert.equal(L.loop_error(raised), handled)
  end)

  it("passes a non-string error value unchanged, and error() as a traceback", function()
    local obj, got = { code = 7 }, {}
    cosock.set_error_handler(function(err, h) got[h.name] = err end)
    cosock.spawn(function() error(obj) end, "table")
    cosock.spawn(function() error() end, "nil")
    -- (level 0: the number itself on every Lua; before 5.3 error() would
    -- prefix a position to a number as to a string)
    cosock.spawn(function() error(42, 0) end, "number")
    cosock.run()
    assert.is_true(rawequal(obj, got.table))
    assert.is_true(L.starts(got["nil"], "stack traceback:"), got["nil"])
    assert.is_true(L.starts(got.number, "42\nstack traceback:"), got.number)
    L.assert_clean()
  end)

  it("gives a handle even when the program dropped the task's own", function()
    local name_seen, str_seen, alive
    cosock.set_error_handler(function(_, h)
      name_seen, str_seen, alive = h.name, tostring(h), h:is_alive()
    end)
    cosock.spawn(function() L.pass(); error("x") end, "nameless-no-more")
    collectgarbage(); collectgarbage()
    cosock.run()
    assert.equal("nameless-no-more", name_seen)
    assert.equal("nameless-no-more", str_seen)
    assert.is_false(alive)
    L.assert_clean()
  end)

  it("an error the handler raises ends run with that value; the other tasks stay", function()
    local boom = { "from the handler" }
    local done = false
    cosock.set_error_handler(function() error(boom) end)
    cosock.spawn(function() error("task error") end, "bad")
    cosock.spawn(function() L.passes(2); done = true end, "good")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(rawequal(boom, err))
    assert.is_false(done)
    cosock.set_error_handler(nil)
    cosock.run()
    assert.is_true(done)
    L.assert_clean()
  end)

  it("a handler that yields is an error out of run, and the loop still works", function()
    cosock.set_error_handler(function() coroutine.yield() end)
    cosock.spawn(function() error("x") end, "bad")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.has.match("yield", tostring(err))
    cosock.set_error_handler(nil)
    L.assert_loop_works()
  end)

  it("set_error_handler(nil) restores cosock's behaviour: the error ends run", function()
    local handled = 0
    cosock.set_error_handler(function() handled = handled + 1 end)
    cosock.set_error_handler(nil)
    cosock.spawn(function() error("ends run", 0) end, "bad")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "ends run\nstack traceback:"), err)
    assert.equal(0, handled)
  end)

  it("reset clears it", function()
    local handled = 0
    cosock.set_error_handler(function() handled = handled + 1 end)
    cosock.reset()
    cosock.spawn(function() error("after reset") end, "bad")
    assert.is_false(pcall(cosock.run))
    assert.equal(0, handled)
  end)

  it("takes a function or nil, nothing else", function()
    for _, bad in ipairs({ 1, "f", {}, true }) do
      local err = select(2, pcall(cosock.set_error_handler, bad))
      assert.has.match("bad argument #1 to 'set_error_handler' %(function or nil expected, got "
        .. type(bad) .. "%)", err)
    end
  end)
end)
