-- The embedding examples (doc/embedding.md) run and print what their
-- headers say: step_host (a frame loop stepping cosock) and luv_host (luv's
-- loop watching cosock.pollfd; skipped, with the reason printed, where the
-- Lua in use has no luv module).

local cosock = require "cosock"
local L = require "spec.support.loop"

local function run_example(name)
  local out, ok, err = L.capture(dofile, "examples/" .. name .. ".lua")
  assert(ok, err)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

describe("embedding examples", function()
  before_each(function() cosock.reset() end)

  it("step_host: a frame loop steps the echo tasks to their end", function()
    assert.same({
      'frame loop: the echo task answered "hello"',
      "frame loop: done after the tasks ended: true",
    }, run_example("step_host"))
    L.assert_clean()
  end)

  local has_luv = pcall(require, "luv")
  if not has_luv then
    print("example_embed_spec: no luv module for this Lua (Debian's lua-luv): luv_host not run")
  end
  local luv_it = has_luv and it or pending
  luv_it("luv_host: luv's loop watches pollfd and steps the task through three host ticks", function()
    assert.same({
      "task got tick 1",
      "task got tick 2",
      "task got tick 3",
      "luv loop ended: cosock has no task left",
    }, run_example("luv_host"))
    L.assert_clean()
  end)
end)
