-- Issue 35, item 6 (the scope side): a deadline at or below 0 (a timeout
-- that made one, -inf, {deadline = 0}) meant "no deadline": fn ran to
-- completion, waits included. Such a deadline has passed: the scope is
-- expired from the start, as a wait with a timeout of 0 or less times out
-- (fn runs; its first wait raises; the scope reports "timeout"). +inf is
-- no deadline. NaN raises (spec/args_new_modules_spec.lua).

local cosock = require "cosock"
local scope = require "cosock.scope"
local compat = require "cosock.compat"
local net = require "spec.support.net"

local pack = compat.pack
local sleep = cosock.socket.sleep
local inf = math.huge

-- fn waits, then returns "ran" (what a deadline not kept gives).
local function waits() sleep(0.02); return "ran" end

local EXPIRED = {
  { "scope.timeout(-1e9, fn)", function() return scope.timeout(-1e9, waits) end, pack(nil, "timeout") },
  { "scope.timeout(-inf, fn)", function() return scope.timeout(-inf, waits) end, pack(nil, "timeout") },
  { "scope.timeout(0, fn)", function() return scope.timeout(0, waits) end, pack(nil, "timeout") },
  { "run{deadline = 0}", function() return scope.run({ deadline = 0 }, waits) end, pack(false, "timeout") },
  { "run{deadline = -1}", function() return scope.run({ deadline = -1 }, waits) end, pack(false, "timeout") },
  { "run{deadline = -inf}", function() return scope.run({ deadline = -inf }, waits) end, pack(false, "timeout") },
  { "run{timeout = -inf}", function() return scope.run({ timeout = -inf }, waits) end, pack(false, "timeout") },
  { "run{timeout = -1e9}", function() return scope.run({ timeout = -1e9 }, waits) end, pack(false, "timeout") },
  { "run{timeout = -1e9} with a task", function()
      return scope.run({ timeout = -1e9 }, function(s) s:spawn(waits) end)
    end, pack(false, "timeout") },
  { "run{timeout = inf, deadline = 0}", function()
      return scope.run({ timeout = inf, deadline = 0 }, waits)
    end, pack(false, "timeout") },
}

describe("regress: a scope deadline at or below 0", function()
  before_each(function() cosock.reset() end)

  for _, case in ipairs(EXPIRED) do
    it("has passed: " .. case[1], function()
      local r = net.in_task(case[2])
      assert.same(case[3], r)
      net.assert_clean()
    end)
  end

  it("has passed, but fn that does not wait returns its results (as scope.timeout(0))", function()
    local r = net.in_task(function()
      return pack(scope.timeout(-1, function() return "x" end)), pack(scope.timeout(0, function() return "x" end))
    end)
    assert.same(pack("x"), r[1])
    assert.same(r[2], r[1])
  end)

  it("inf is no deadline", function()
    local r = net.in_task(function()
      local a = pack(scope.timeout(inf, function() sleep(0.001); return scope.current():deadline() end))
      local b = pack(scope.run({ deadline = inf }, function(s) sleep(0.001); return s:deadline() end))
      local c = pack(scope.run({ timeout = inf, grace = inf }, function() sleep(0.001); return "ran" end))
      return a, b, c
    end)
    assert.same(pack(nil), r[1])
    assert.same(pack(true, nil), r[2])
    assert.same(pack(true, "ran"), r[3])
  end)
end)
