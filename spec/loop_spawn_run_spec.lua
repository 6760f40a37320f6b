-- Conformance: cosock.spawn and cosock.run (when tasks first run, what run
-- returns, when run stops, running again).

local cosock = require "cosock"
local L = require "spec.support.loop"

describe("cosock.spawn / cosock.run", function()
  before_each(function()
    cosock.reset()
  end)

  it("spawn returns a handle and never runs the task inside the call", function()
    local ran = 0
    local h = cosock.spawn(function() ran = ran + 1 end, "t")
    assert.is_not_nil(h)
    assert.is_true(type(h) == "table" or type(h) == "userdata")
    assert.equal(0, ran)
    assert.equal(1, L.stats().tasks)
    cosock.run()
    assert.equal(1, ran)
    L.assert_clean()
  end)

  it("first resume gets exactly three nils", function()
    local n, a, b, c
    cosock.spawn(function(...)
      n = select("#", ...)
      a, b, c = ...
    end)
    cosock.run()
    assert.equal(3, n)
    assert.is_nil(a)
    assert.is_nil(b)
    assert.is_nil(c)
    L.assert_clean()
  end)

  it("spawn from inside a task does not run the child inside the call", function()
    local log = {}
    cosock.spawn(function()
      table.insert(log, "parent-before")
      cosock.spawn(function() table.insert(log, "child") end, "child")
      table.insert(log, "parent-after")
    end, "parent")
    cosock.run()
    assert.same({ "parent-before", "parent-after", "child" }, log)
    L.assert_clean()
  end)

  it("a task spawned during a pass first runs in the next pass", function()
    -- The ticker's i-th "tick" happens in pass i+1 (a zero timeout times out on
    -- the next pass); chain link k is spawned in pass k-1 and so runs in pass k.
    -- If spawned tasks ran in the pass that spawned them, the whole chain would
    -- run in pass 1, before the first tick.
    local log = {}
    cosock.spawn(function()
      for _ = 1, 3 do
        L.pass()
        table.insert(log, "tick")
      end
    end, "ticker")
    local function link(k)
      return function()
        table.insert(log, "link" .. k)
        if k < 6 then cosock.spawn(link(k + 1), "link" .. (k + 1)) end
      end
    end
    cosock.spawn(link(1), "link1")
    cosock.run()
    local pos = {}
    for i, v in ipairs(log) do
      if pos[v] == nil then pos[v] = i end
    end
    assert.is_not_nil(pos.tick)
    assert.is_not_nil(pos.link3)
    assert.is_not_nil(pos.link6)
    assert.is_true(pos.tick < pos.link3,
      "first tick (pass 2) must come before link3 (pass 3): " .. table.concat(log, ","))
    L.assert_clean()
  end)

  it("run returns no values", function()
    cosock.spawn(function() end)
    assert.equal(0, select("#", cosock.run()))
    L.assert_clean()
  end)

  it("run with nothing spawned returns at once and returns no values", function()
    assert.equal(0, select("#", cosock.run()))
    assert.equal(0, select("#", cosock.run()))
    L.assert_clean()
  end)

  it("run can be called again after it returned", function()
    local ran = {}
    cosock.spawn(function() ran[#ran + 1] = "first" end)
    cosock.run()
    cosock.spawn(function()
      L.pass()
      ran[#ran + 1] = "second"
    end)
    cosock.run()
    assert.same({ "first", "second" }, ran)
    L.assert_clean()
  end)

  it("run can be called again after it raised", function()
    cosock.spawn(function() error("first run fails", 0) end)
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.is_true(L.starts(L.loop_error(err), "first run fails"))
    L.assert_loop_works()
  end)

  it("runs every spawned task to completion, in many passes", function()
    local done = 0
    for i = 1, 50 do
      cosock.spawn(function()
        L.passes(i % 5)
        done = done + 1
      end, "t" .. i)
    end
    assert.equal(50, L.stats().tasks)
    cosock.run()
    assert.equal(50, done)
    L.assert_clean()
  end)

  it("a task woken by another task in the pass that task died is still resumed", function()
    -- run must only stop when every task is dead AND nothing is ready.
    local obj = L.obj("o")
    local got
    cosock.spawn(function()
      got = L.yield({ obj })
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return obj:has_waker() end, "waiter to park")
      obj:fire("recvr")
    end, "waker")
    cosock.run()
    assert.same({ obj }, got)
    L.assert_clean()
  end)

  it("spawned tasks that finish and tasks that are cancelled leave nothing behind", function()
    local obj = L.obj("never")
    local parked = cosock.spawn(function() L.yield({ obj }, { L.obj("s") }, 1000) end, "parked")
    local never_ran = cosock.spawn(function() error("must not run") end, "never-ran")
    never_ran:cancel()
    cosock.spawn(function()
      L.wait_until(function() return obj:has_waker() end, "parked to park")
      parked:cancel()
    end, "canceller")
    cosock.run()
    assert.is_false(parked:is_alive())
    assert.is_false(never_ran:is_alive())
    L.assert_clean()
  end)

  it("a task that spawns many children which spawn grandchildren", function()
    local count = 0
    cosock.spawn(function()
      for _ = 1, 10 do
        cosock.spawn(function()
          count = count + 1
          for _ = 1, 3 do
            cosock.spawn(function() count = count + 1 end)
          end
        end)
      end
    end)
    cosock.run()
    assert.equal(40, count)
    L.assert_clean()
  end)
end)
