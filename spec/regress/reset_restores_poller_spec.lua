-- Regression: after the loop moved to epoll for an fd above FD_SETSIZE,
-- cosock.reset() kept epoll, so later runs polled with a backend nobody chose.
local cosock = require "cosock"
local core = require "cosock.core"

describe("reset", function()
  it("goes back to the poller the loop started with", function()
    cosock.reset()
    local start = core.stats().backend
    local other = start == "select" and "epoll" or "select"
    finally(function() core.set_backend(start); cosock.reset() end)
    core.set_backend(other)
    assert.equal(other, core.stats().backend)
    -- set_backend chooses the backend for good: reset keeps the choice
    cosock.reset()
    assert.equal(other, core.stats().backend)
    core.set_backend(start)
    cosock.reset()
    assert.equal(start, core.stats().backend)
  end)

  it("forgets a move to epoll made for a large fd", function()
    cosock.reset()
    local socket = require "socket"
    local ok_limit = io.popen("ulimit -n"):read("*l")
    local limit = ok_limit == "unlimited" and math.huge or tonumber(ok_limit) or 0
    if limit <= 1100 then
      pending("RLIMIT_NOFILE " .. tostring(ok_limit) .. " too low to open fd 1024+")
      return
    end
    local chosen = core.stats().backend
    finally(function() core.set_backend(chosen); cosock.reset() end)
    core.set_backend("select") -- the loop starts on select in this test
    cosock.reset()
    local held, big = {}, nil
    for _ = 1, 1100 do
      local s = assert(socket.udp())
      assert(s:setsockname("127.0.0.1", 0)) -- LuaSocket opens the fd lazily
      held[#held + 1] = s
      if s:getfd() >= 1024 then big = s; break end
    end
    assert(big, "setup: no fd at or above 1024")
    local obj = { inner_sock = big }
    function obj.setwaker() end
    function obj._wake() end
    cosock.spawn(function() coroutine.yield({ obj }, nil, 0) end)
    cosock.run()
    for _, s in ipairs(held) do s:close() end
    local moved = core.stats().backend
    cosock.reset()
    local after = core.stats().backend
    assert.equal("epoll", moved)
    assert.equal("select", after)
  end)
end)
