-- Issue 35, item 4: a deadline that passed while an inner scope's deferred
-- function waited was lost: the deferred wait raised the cancellation, the
-- inner scope swallowed it and returned, and scope.timeout returned fn's
-- results after its deadline. The inner scope passes the cancellation on.

local cosock = require "cosock"
local scope = require "cosock.scope"
local compat = require "cosock.compat"
local net = require "spec.support.net"

local pack = compat.pack
local sleep = cosock.socket.sleep

describe("regress: a deadline that passes in an inner scope's cleanup", function()
  before_each(function() cosock.reset() end)

  it("makes scope.timeout report the timeout", function()
    local r = net.in_task(function()
      return scope.timeout(0.003, function()
        scope.run(function(s) s:defer(function() sleep(5) end) end)
        return "x"
      end)
    end)
    assert.same(pack(nil, "timeout"), r)
    net.assert_clean()
  end)

  it("makes scope.run with a timeout report it, through two inner scopes", function()
    local after = false
    local r = net.in_task(function()
      return scope.run({ timeout = 0.003 }, function()
        scope.run(function()
          scope.run(function(s) s:defer(function() sleep(5) end) end)
          after = true
        end)
        after = true
        return "x"
      end)
    end)
    assert.same(pack(false, "timeout"), r)
    assert.is_false(after)
  end)

  it("an enclosing s:cancel() during the cleanup is passed on the same way", function()
    local r = net.in_task(function()
      return scope.run(function(outer)
        local ok = scope.run(function(s)
          s:defer(function()
            cosock.spawn(function() outer:cancel() end)
            sleep(5)
          end)
        end)
        return "x", ok
      end)
    end)
    -- (fn raised the cancellation of outer:cancel(): "cancelled")
    assert.same(pack(false, "cancelled"), r)
  end)

  it("a deferred function that raises the cancellation by hand, with nothing enclosing cancelled, changes nothing", function()
    local r = net.in_task(function()
      return scope.run(function(s) s:defer(function() error(scope.cancelled) end); return "x" end)
    end)
    assert.same(pack(true, "x"), r)
  end)
end)
