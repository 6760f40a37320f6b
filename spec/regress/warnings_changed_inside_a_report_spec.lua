-- Regression: cosock.tasks.warnings reports what a pass noted one by one; a
-- report that changed the settings broke the rest of that pass's queue.
-- warnings(false) made run() raise "tasks/warnings.lua:51: attempt to call
-- a nil value (upvalue 'report')"; warnings{ready = ...} (turn now off) let
-- the queued turn warnings through to the default reporter, worded "(limit
-- ? s)"; the idle check went on reporting unwakeable tasks after a report
-- turned that off. What is left is now told as the settings are then: a
-- kind turned off is not told, nor a turn within a raised limit.

local cosock = require "cosock"
local tasks = require "cosock.tasks"

local socket = cosock.socket

local function busy(secs)
  local t0 = socket.gettime()
  while socket.gettime() - t0 < secs do end
end

-- Three tasks whose turns each take longer than 1 ms, in one pass.
local function three_long_turns()
  for i = 1, 3 do cosock.spawn(function() busy(0.006) end, "busy" .. i) end
end

describe("regress: the warnings changed by a report", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    tasks.warnings(false)
    cosock.reset()
  end)

  it("warnings(false) in a report: the rest of the pass is not told, run goes on", function()
    local got = {}
    tasks.warnings { turn = 0.001, report = function(_, message)
      got[#got + 1] = message
      tasks.warnings(false)
    end }
    three_long_turns()
    cosock.run()                               -- (it raised: a nil report)
    assert.are.equal(1, #got)
    assert.matches("^task 'busy1' ran ", got[1])
  end)

  it("another kind and reporter in a report: the first kind's queue is not told", function()
    local first, second = {}, {}
    tasks.warnings { turn = 0.001, report = function(kind, message)
      first[#first + 1] = message
      tasks.warnings { ready = 1000, report = function(k, m) second[#second + 1] = k .. ": " .. m end }
    end }
    three_long_turns()
    cosock.run()
    assert.are.equal(1, #first)
    assert.are.same({}, second)                -- (it got two turn warnings "(limit ? s)")
  end)

  it("a limit raised in a report: the turns within it are not told", function()
    local got = {}
    tasks.warnings { turn = 0.001, report = function(_, message)
      got[#got + 1] = message
      tasks.warnings { turn = 1000, report = function(_, m) got[#got + 1] = m end }
    end }
    three_long_turns()
    cosock.run()
    assert.are.equal(1, #got)
  end)

  it("unwakeable turned off in a report: the idle check tells no more", function()
    local got = {}
    tasks.warnings { unwakeable = true, interval = 0.001, report = function(_, message)
      got[#got + 1] = message
      tasks.warnings(false)
    end }
    local hs = {}
    for i = 1, 3 do hs[i] = cosock.spawn(function() coroutine.yield() end, "nothing" .. i) end
    cosock.spawn(function()
      socket.sleep(0.01)                       -- (the loop is idle meanwhile: the check runs)
      for _, h in ipairs(hs) do h:cancel() end
    end, "canceller")
    cosock.run()
    assert.are.equal(1, #got)
    assert.matches("^task 'nothing1' waits on nothing", got[1])
  end)
end)
