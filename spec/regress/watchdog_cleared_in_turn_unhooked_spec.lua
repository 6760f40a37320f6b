-- A watchdog cleared by the task it watches: the watchdog's hook must stay
-- on after that resume (CN_AT_RESUMED, src/features/watchdog.c) long enough
-- to take its count hook off the task's coroutine, and then go. Had the
-- hook gone with the limit, the coroutine would keep the count hook for
-- good. (LuaJIT keeps one hook per state: checked after run there.)

local cosock = require "cosock"
local L = require "spec.support.loop"
local V = require "spec.support.version"

describe("a watchdog cleared inside the task it watches", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.set_watchdog(nil) end)

  it("leaves the task's coroutine without the count hook once its turn ends", function()
    local reports, co, hooked_after = {}, nil, nil
    cosock.set_watchdog(3600, nil, function(r) reports[#reports + 1] = r end)
    cosock.spawn(function()
      co = coroutine.running()
      cosock.set_watchdog(nil)
      L.pass()                                 -- a second turn, after the first was unwatched
    end, "clears")
    cosock.spawn(function()
      L.pass()
      if not V.jit then hooked_after = debug.gethook(co) end
    end, "looks")
    cosock.run()
    assert.is_nil(hooked_after)
    assert.is_nil(debug.gethook(co))
    if V.jit then assert.is_nil(debug.gethook()) end
    assert.equal(0, #reports)
    L.assert_clean()
  end)

  it("watches nobody after it (a later task runs without the count hook)", function()
    local hook
    cosock.set_watchdog(3600)
    cosock.spawn(function() cosock.set_watchdog(nil) end, "clears")
    cosock.run()
    cosock.spawn(function() hook = debug.gethook() end, "later")
    cosock.run()
    assert.is_nil(hook)
  end)
end)
