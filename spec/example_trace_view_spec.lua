-- examples/trace_view.lua: the waits of its sample trace by kind, and of a
-- trace file given as its argument (one of spec/support/trace_gen.lua's).
local interpreter = require "spec.support.interpreter"
local child = require "spec.support.child"
local gen = require "spec.support.trace_gen"

local function run(arg)
  return child.command(("LUA_PATH='lua/?.lua;;' %s examples/trace_view.lua %s 2>&1; echo \"status $?\""):format(
    interpreter, arg or ""))
end

describe("examples/trace_view.lua", function()
  it("prints the waits of its sample trace by kind, and the longest wait for a turn", function()
    assert.equal(table.concat({
      "3 tasks, 1.000 s",
      "wait           count      total    longest  ended by",
      "recv               1    0.600 s    0.600 s  close 1",
      "send               1    0.300 s    0.300 s  ready 1",
      "sleep              1    0.200 s    0.200 s  timer 1",
      "channel-recv       1    0.200 s    0.200 s  send 1",
      "longest wait for a turn: #3 worker, 0.200 s (woken by spawn at 0.100 s)",
      "status 0",
    }, "\n") .. "\n", run())
  end)

  it("reads the trace file it is given, and fails naming it when it is not one", function()
    local path = os.tmpname()
    gen.small(path)
    local out = run(path)
    assert.matches("^3 tasks, 1.000 s\n", out)
    local f = assert(io.open(path, "wb"))
    f:write("not a trace\n")
    f:close()
    out = run(path)
    os.remove(path)
    assert.matches(path .. ":1: not a cosock trace", out, 1, true)
    assert.matches("status 1\n$", out)
  end)
end)
