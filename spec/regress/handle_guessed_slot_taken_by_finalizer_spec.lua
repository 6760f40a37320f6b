-- Regression guard: spawn makes its handle mapping to the slot its task will
-- most likely take (the first free one), and maps it again only when the
-- task got another. A finalizer that runs inside spawn's allocations and
-- spawns (taking that slot) or resets the loop makes the guess wrong: each
-- handle must still name its own task, never the finalizer's.

local cosock = require "cosock"
local V = require "spec.support.version"

describe("regress: a handle whose guessed slot a finalizer took", function()
  before_each(function() cosock.reset() end)

  it("names its own task when a finalizer spawned inside spawn", function()
    local on, inner, i, wrong = true, 0, 0, 0
    local joined = {}
    local function body(id) return function() return id end end
    local handles = {}
    while inner < 100 and i < 400000 do
      i = i + 1
      V.garbage(function()
        if not on then return end
        inner = inner + 1
        local h = cosock.spawn(body(-inner))
        if not h:is_alive() then wrong = wrong + 1 end
        handles[#handles + 1] = { h, -inner }
      end)
      local h = cosock.spawn(body(i))
      if not h:is_alive() then wrong = wrong + 1 end
      handles[#handles + 1] = { h, i }
      if i % 1000 == 0 then handles = {}; cosock.run() end
    end
    on = false
    collectgarbage()
    collectgarbage()                           -- every finalizer has run
    assert.is_true(inner >= 100)
    assert.are.equal(0, wrong)
    cosock.spawn(function()
      for _, e in ipairs(handles) do
        local ok, id = e[1]:join()
        joined[#joined + 1] = ok and id == e[2]
      end
    end, "joiner")
    cosock.run()
    for k = 1, #joined do assert.is_true(joined[k]) end
    assert.are.equal(#handles, #joined)
  end)

  it("names its own task when a finalizer reset the loop inside spawn", function()
    local wrong = 0
    for _ = 1, 2000 do
      local armed = true
      V.garbage(function()
        if armed then
          armed = false
          cosock.reset()
          cosock.spawn(function() end)         -- takes the first slot after the reset
        end
      end)
      local h = cosock.spawn(function() end)
      if not h:is_alive() then wrong = wrong + 1 end
    end
    assert.are.equal(0, wrong)
    collectgarbage()
    cosock.run()
    assert.are.equal(0, require("cosock.core").stats().tasks)
  end)
end)
