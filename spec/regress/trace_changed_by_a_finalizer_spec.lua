-- Regression: any allocation may run a finalizer, and a finalizer may reset
-- the loop (outside run) or stop and start the trace. cosock.trace's C
-- functions held the trace's state across such allocations: a reset inside
-- a traced spawn's naming, inside stats() or inside events() freed the state
-- or the buffer they went on using (heap-use-after-free under ASan; events()
-- read an unmapped buffer in a plain build), and save() could write part of
-- a trace that was gone. The state now lives as long as the loop, every
-- function reads it afresh after Lua could run, and events() and save()
-- raise when the trace they read was reset or started again meanwhile.

local cosock = require "cosock"
local trace = require "cosock.trace"
local child = require "spec.support.child"

-- The child programs' prologue (spec.support.finalizer: a fresh process
-- tries up to 50,000 times).
local FINALIZER_INSIDE = [[
local cosock = require "cosock"
local trace = require "cosock.trace"
local inside = require("spec.support.finalizer").inside
local function finalizer_inside(times, act, call, setup) return inside(times, act, call, setup, 50000) end
]]

local finalizer_inside = require("spec.support.finalizer").inside

local function restart(size)
  if trace.on() then trace.stop() end
  trace.start({ size = size })
end

-- After everything: the loop and a new trace work.
local function assert_trace_works()
  restart(64)
  local tx, rx = cosock.channel.new()
  cosock.spawn(function() assert(rx:receive() == "v") end, "receiver")
  cosock.spawn(function() tx:send("v") end, "sender")
  cosock.run()
  trace.stop()
  local kinds = {}
  for _, e in ipairs(trace.events()) do kinds[e.kind] = (kinds[e.kind] or 0) + 1 end
  assert.are.equal(2, kinds.spawn)
  assert.are.equal(2, kinds["end"])
  assert.are.equal(0, cosock.stats().tasks)
end

describe("regress: the trace changed by a finalizer while cosock.trace works on it", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    collectgarbage()
    cosock.reset()
  end)

  -- These two calls allocate little: in the 16 MB heap of a busted shard a
  -- collection cycle takes megabytes of allocation, and a finalizer seldom
  -- ends up inside them. They run in a fresh process, whose heap is small.
  it("a reset inside a traced spawn of the main program, and inside stats()", function()
    local out = child.run(FINALIZER_INSIDE .. [[
      local hits = finalizer_inside(200, cosock.reset, function()
        cosock.spawn(function() end, "a task with a name")
      end, function()
        if not trace.on() then trace.start({ size = 16 }) end
      end)
      assert(cosock.stats().tasks > 0)       -- (spawns after the last reset)
      cosock.run()
      assert(cosock.stats().tasks == 0)
      print("spawn", hits >= 200)
      local outcomes
      hits, outcomes = finalizer_inside(200, cosock.reset, function()
        local s = trace.stats()
        -- before the reset (the trace as started) or after it (all zeros)
        local before = s.on and s.size == 1000 and s.recorded == 0
        local after = not s.on and s.size == 0 and s.recorded == 0 and s.dropped == 0
        if not (before or after) then error("stats of no one moment") end
      end, function()
        if trace.on() then trace.stop() end
        trace.start({ size = 1000 })
      end)
      for _, o in ipairs(outcomes) do assert(o[1], o[2]) end
      print("stats", hits >= 200)
    ]])
    assert.are.equal("spawn\ttrue\nstats\ttrue\n", out)
    assert_trace_works()
  end)

  it("a reset inside events() raises a clear error, never reads the freed buffer", function()
    local raised = 0
    local hits, outcomes = finalizer_inside(20, cosock.reset, function()
      if #trace.events() ~= 300 then error("not every event") end
    end, function()
      restart(65536)                             -- (a buffer big enough to be unmapped when freed)
      for i = 1, 300 do trace.mark("note", "number " .. i) end
    end)
    assert.is_true(hits >= 20)
    for _, o in ipairs(outcomes) do
      if not o[1] then
        raised = raised + 1
        assert.are.equal("cosock.trace.events: the trace was reset or started again while it was read",
          o[2])
      end
    end
    assert.is_true(raised > 0)
    assert_trace_works()
  end)

  it("a restart inside events() raises the same error", function()
    local hits, outcomes = finalizer_inside(20, function() restart(16) end, function()
      if #trace.events() ~= 300 then error("not every event") end
    end, function()
      restart(1000)
      for i = 1, 300 do trace.mark("note", "number " .. i) end
    end)
    assert.is_true(hits >= 20)
    for _, o in ipairs(outcomes) do
      if not o[1] then assert.matches("the trace was reset or started again while it was read", o[2]) end
    end
    assert_trace_works()
  end)

  it("a reset while save() writes raises instead of writing part of a trace", function()
    local path = os.tmpname()
    local hits, outcomes = finalizer_inside(5, cosock.reset, function()
      trace.save(path)
    end, function()
      restart(9000)
      for _ = 1, 9000 do trace.mark("note", "x") end -- (save writes 4096 at a time)
    end)
    os.remove(path)
    assert.is_true(hits >= 5)
    local raised = 0
    for _, o in ipairs(outcomes) do
      if not o[1] then
        raised = raised + 1
        assert.matches("cosock%.trace%.save: the trace was reset or started again while it was written", o[2])
      end
    end
    assert.is_true(raised > 0)
    assert_trace_works()
  end)

  it("an error's __tostring that stops and starts the trace as its task ends", function()
    restart(64)
    local mt = { __tostring = function()
      trace.stop()
      trace.start({ size = 16 })
      return "boom"
    end }
    cosock.spawn(function() error(setmetatable({}, mt)) end, "raiser")
    assert.is_false(pcall(cosock.run))
    assert.is_true(trace.on())
    for _, e in ipairs(trace.events()) do assert.is_string(e.kind) end
    assert_trace_works()
  end)
end)
