-- A seeded fuzz of cosock.step interleaved with spawns, cancels, resets,
-- sends from outside the loop and next_timeout/pollfd calls. Invariants: step
-- returns true exactly while tasks remain; next_timeout is nil or >= 0 and 0
-- when a task is ready; a cancelled task never runs again; a task's error
-- comes out of step (or goes to the handler) and leaves the loop usable; at
-- the end every task can be cancelled and the loop is clean and works.
-- COSOCK_STEP_FUZZ_COUNT changes the number of sequences.

local cosock = require "cosock"
local L = require "spec.support.loop"
local socket = cosock.socket

local COUNT = tonumber(os.getenv("COSOCK_STEP_FUZZ_COUNT")) or 40
local ACTIONS = 60

-- A small linear congruential generator: the same sequence on every Lua
-- (doubles hold its 31-bit products exactly).
local function rng(seed)
  local s = seed % 2147483647
  if s == 0 then s = 1 end
  return function(n)
    s = (s * 16807) % 2147483647
    return s % n + 1
  end
end

local function sequence(seed)
  local r = rng(seed)
  local handles, cancelled, ran_after_cancel = {}, {}, false
  local tx, rx = cosock.channel.new()
  cosock.set_error_handler(r(2) == 1 and function() end or nil)
  local bodies = {
    function() end,
    function() socket.sleep(0) end,
    function() socket.sleep(0.001 * r(3)) end,
    function() rx:receive() end,
    function() tx:send("x") end,
    function() error("fuzz error") end,
  }
  for _ = 1, ACTIONS do
    local a = r(10)
    if a <= 3 then
      local body, id = bodies[r(#bodies)], #handles + 1
      handles[id] = cosock.spawn(function()
        if cancelled[id] then ran_after_cancel = true end
        body()
        if cancelled[id] then ran_after_cancel = true end
      end, "fuzz" .. id)
    elseif a == 4 and #handles > 0 then
      local id = r(#handles)
      handles[id]:cancel()
      cancelled[id] = true
    elseif a == 5 then
      tx:send("outside")
    elseif a == 6 and r(4) == 1 then
      cosock.reset()
      for id in pairs(handles) do cancelled[id] = true end
      tx, rx = cosock.channel.new()
    elseif a == 7 then
      local t = cosock.next_timeout()
      assert(t == nil or t >= 0, "next_timeout " .. tostring(t))
      if L.stats().ready > 0 then assert(t == 0, "ready but next_timeout " .. tostring(t)) end
    elseif a == 8 then
      assert(type(cosock.pollfd()) == "number")
    else
      local ok, more = pcall(cosock.step, r(2) == 1 and 0 or 0.002)
      if ok then
        assert(more == (L.stats().tasks > 0), "step said " .. tostring(more))
      else
        local e = tostring(more)                 -- a task's error (two receivers is one)
        assert(e:find("fuzz error", 1, true) or e:find("waker already set", 1, true), e)
      end
    end
    assert(not ran_after_cancel, "a cancelled task ran")
  end
  for _, h in pairs(handles) do h:cancel() end
  assert.is_false(cosock.step())
  cosock.set_error_handler(nil)
  L.assert_clean()
end

describe("step fuzzer", function()
  before_each(function()
    cosock.reset()
  end)

  it("keeps its invariants over " .. COUNT .. " seeded sequences", function()
    for seed = 1, COUNT do
      local ok, err = pcall(sequence, seed)
      if not ok then error("seed " .. seed .. ": " .. tostring(err), 0) end
    end
    L.assert_loop_works()
  end)
end)
