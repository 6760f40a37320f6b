-- Regression (issue 35): with a seed, the order of a batch of tasks ready
-- together was drawn one resume at a time, each draw walking to the k-th
-- task left: 20,000 tasks waking at one virtual instant took seconds
-- (quadratic) against a fraction of one without a seed. The batch is now
-- shuffled once when the pass starts (linear). The contract stays: the same
-- seed gives the same order; every task of the batch runs once; a task
-- that leaves the batch (cancelled by one that ran before it) does not run;
-- what the batch wakes runs in a later pass. (The orders a given seed gives
-- changed with this: doc/simulation.md.)

local cosock = require "cosock"
local sim = require "cosock.sim"

-- Runs n tasks that all wake at virtual time 1; returns the order they woke in.
local function batch(seed, n)
  sim.on({ seed = seed, record = false })
  local order = {}
  for i = 1, n do
    cosock.spawn(function()
      cosock.socket.sleep(1)
      order[#order + 1] = i
    end, "t" .. i)
  end
  cosock.run()
  sim.off()
  return order
end

local function is_permutation(order, n)
  if #order ~= n then return false end
  local seen = {}
  for _, v in ipairs(order) do
    if seen[v] or v < 1 or v > n then return false end
    seen[v] = true
  end
  return true
end

describe("regress: the seeded order of a batch", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  it("3,000 tasks due at one instant: each runs once, in the seed's order, the same every time", function()
    local a = batch(7, 3000)
    assert.is_true(is_permutation(a, 3000))
    assert.same(a, batch(7, 3000))
    local b, c = batch(8, 1000), batch(7, 1000)
    assert.is_true(is_permutation(b, 1000))
    assert.are_not.same(b, c)
    local plain = batch(nil, 200)
    for i = 1, 200 do assert.equal(i, plain[i]) end -- (no seed: first-come)
  end)

  it("a task cancelled by one that ran before it in the batch does not run; wakes go to a later pass", function()
    for seed = 1, 20 do
      sim.on({ seed = seed, record = false })
      local ran, handles, passes = {}, {}, {}
      for i = 1, 10 do
        handles[i] = cosock.spawn(function()
          cosock.socket.sleep(1)
          ran[#ran + 1] = i
          passes[i] = cosock.stats().passes
          -- the first to run cancels every task of an even number still waiting
          if #ran == 1 then
            for j = 2, 10, 2 do if j ~= i then handles[j]:cancel() end end
          end
        end, "t" .. i)
      end
      cosock.run()
      sim.off()
      local first = ran[1]
      for _, i in ipairs(ran) do
        assert.is_true(i == first or i % 2 == 1, "seed " .. seed .. ": cancelled task " .. i .. " ran")
        assert.equal(passes[first], passes[i]) -- (one batch, one pass)
      end
      assert.equal(first % 2 == 0 and 6 or 5, #ran)
    end
  end)
end)
