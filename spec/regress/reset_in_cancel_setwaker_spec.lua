-- Regression: handle:cancel() outside run() calls setwaker(kind, nil) on each
-- object the task waited on; one that called cosock.reset() there freed the
-- task (and its wait array) that cancel was still walking: a use-after-free
-- in cn_unpark, a segfault in a plain build. reset and run are refused there
-- now with an error naming the place and the task; the cancel completes and
-- raises that error as the setwaker's.

local cosock = require "cosock"
local core = require "cosock.core"

-- A task parked on obj, left parked by a run that another task's error ended.
local function park_on(obj, name)
  local h = cosock.spawn(function() coroutine.yield({ obj }, nil, nil) end, name)
  cosock.spawn(function() error("stop") end)
  assert(not pcall(cosock.run))
  assert(h:is_alive())
  return h
end

-- An object whose setwaker(kind, nil) calls fn (once) and keeps its result.
local function obj_calling(fn)
  local o = {}
  function o:setwaker(_, waker)
    if waker == nil and not self.done then
      self.done = true
      self.result = { pcall(fn) }
    end
  end
  return o
end

describe("regress: reset and run inside the setwaker calls of cancel", function()
  before_each(function() cosock.reset() end)

  it("reset is refused, naming cancel and the task; the cancel completes", function()
    local o = obj_calling(cosock.reset)
    local h = park_on(o, "parked")
    assert.is_true(pcall(h.cancel, h))
    assert.is_false(o.result[1])
    assert.matches("cosock.reset: cannot reset inside the setwaker calls of handle:cancel%(%) %(task 'parked'%)",
      o.result[2])
    assert.is_false(h:is_alive())
    assert.are.equal(0, core.stats().tasks)
    cosock.reset()                             -- allowed again afterwards
    local ran = false
    cosock.spawn(function() ran = true end)
    cosock.run()
    assert.is_true(ran)
  end)

  it("an unprotected reset raises out of cancel, which still cancelled the task", function()
    local o = {}
    function o.setwaker(_, _, waker) if waker == nil then cosock.reset() end end
    local h = park_on(o, "parked")
    local ok, err = pcall(h.cancel, h)
    assert.is_false(ok)
    assert.matches("cannot reset inside the setwaker calls of handle:cancel%(%)", err)
    assert.is_false(h:is_alive())
    assert.are.equal(0, core.stats().tasks)
  end)

  it("run is refused the same way", function()
    local o = obj_calling(cosock.run)
    local h = park_on(o, "parked")
    cosock.spawn(function() end, "other")
    assert.is_true(pcall(h.cancel, h))
    assert.is_false(o.result[1])
    assert.matches("cosock.run: cannot run inside the setwaker calls of handle:cancel%(%) %(task 'parked'%)",
      o.result[2])
    cosock.run()                               -- the other task runs now
    assert.are.equal(0, core.stats().tasks)
  end)

  it("spawn and cancel of another task work there", function()
    local other, ran
    local o = obj_calling(function()
      other:cancel()
      cosock.spawn(function() ran = true end, "new")
    end)
    local h = park_on(o, "parked")
    other = cosock.spawn(function() coroutine.yield(nil, nil, 100) end, "other")
    assert.is_true(pcall(h.cancel, h))
    assert.is_true(o.result[1])
    assert.is_false(other:is_alive())
    cosock.run()
    assert.is_true(ran)
    assert.are.equal(0, core.stats().tasks)
  end)

  it("the mark is gone after the cancel, also when a setwaker raised", function()
    local o = {}
    function o.setwaker(_, _, waker) if waker == nil then error("setwaker fails") end end
    local h = park_on(o, "parked")
    local ok, err = pcall(h.cancel, h)
    assert.is_false(ok)
    assert.matches("setwaker fails", err)
    assert.is_true(pcall(cosock.reset))
    assert.is_true(pcall(cosock.run))
  end)
end)
