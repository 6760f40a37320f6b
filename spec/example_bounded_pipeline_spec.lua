-- examples/bounded_pipeline.lua runs and prints what its header says.

local cosock = require "cosock"
local L = require "spec.support.loop"

describe("examples/bounded_pipeline.lua", function()
  before_each(function() cosock.reset() end)

  it("shows the producer held back by the bounded channel, and the dropping producer", function()
    local out, ok, err = L.capture(dofile, "examples/bounded_pipeline.lua")
    assert(ok, err)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    local queued, results = {}, {}
    for _, line in ipairs(lines) do
      local n = line:match("^queue job (%d+)")
      if n then queued[#queued + 1] = tonumber(n) end
      local i, sq = line:match("^result (%d+) = (%d+)$")
      if i then results[#results + 1] = tonumber(i) ^ 2 == tonumber(sq) end
    end
    assert.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, queued)
    assert.equal(10, #results)
    for _, right in ipairs(results) do assert.is_true(right) end
    assert.equal("queue job 4 (3 queued, waiting)", lines[4])
    assert.equal("producer was at most 3 jobs ahead, waited 7 times", lines[#lines - 1])
    assert.equal("dropped jobs 4 to 10: the queue was full", lines[#lines])
    L.assert_clean()
  end)
end)
