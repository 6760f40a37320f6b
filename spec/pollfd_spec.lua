-- cosock.pollfd(): one descriptor that becomes readable when the loop has
-- work (an fd a task waits on is ready, a timer is due, a task is ready), for
-- a host loop to watch (doc/embedding.md). Readiness is looked at with
-- LuaSocket's select on an object whose getfd gives the descriptor; every
-- wait has a limit.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"
local rawsocket = require "socket"

local function readable(fd, limit)
  local r = rawsocket.select({ { getfd = function() return fd end, dirty = function() return false end } },
                             nil, limit)
  return #r > 0
end

describe("cosock.pollfd", function()
  before_each(function()
    cosock.reset()
  end)

  it("returns the same integer descriptor each time, and moves the loop to epoll", function()
    local fd = cosock.pollfd()
    assert.equal("number", type(fd))
    assert.equal(fd, cosock.pollfd())
    assert.equal("epoll", core.stats().backend)
  end)

  it("is not readable when nothing is spawned", function()
    local fd = cosock.pollfd()
    assert.is_false(cosock.step())
    assert.is_false(readable(fd, 0))
  end)

  it("is readable when a task is ready", function()
    local fd = cosock.pollfd()
    cosock.spawn(function() end)
    assert.equal(0, cosock.next_timeout())       -- (re-arms it after the spawn)
    assert.is_true(readable(fd, 5))
    assert.is_false(cosock.step(0))
    assert.is_false(readable(fd, 0))
  end)

  it("becomes readable when an armed timer is due", function()
    local fd = cosock.pollfd()
    local done = false
    cosock.spawn(function() cosock.socket.sleep(0.02); done = true end, "sleeper")
    assert.is_true(cosock.step(0))               -- it sleeps: the timer is armed
    assert.is_true(readable(fd, 10))
    for _ = 1, 10 do
      if not cosock.step(0) then break end
    end
    assert.is_true(done)
  end)

  it("becomes readable when a socket a task waits on gets data", function()
    local fd = cosock.pollfd()
    local server = assert(cosock.socket.bind("127.0.0.1", 0))
    local _, port = server:getsockname()
    local got, state
    cosock.spawn(function()
      local c = assert(server:accept())
      state = "receiving"
      got = c:receive("*l")
      c:close()
      server:close()
    end, "reader")
    assert.is_true(cosock.step(0))               -- it waits to accept
    local client = assert(rawsocket.connect("127.0.0.1", port))
    for _ = 1, 20 do                             -- until it waits on the data
      if state == "receiving" then break end
      assert.is_true(readable(fd, 10))
      cosock.step(0)
    end
    assert.equal("receiving", state)
    assert.is_false(readable(fd, 0))
    client:send("data\n")
    assert.is_true(readable(fd, 10))
    for _ = 1, 10 do
      if not cosock.step(0) then break end
    end
    assert.equal("data", got)
    client:close()
    L.assert_clean()
  end)

  it("keeps working after a reset and after set_backend('select')", function()
    local fd = cosock.pollfd()
    cosock.reset()
    core.set_backend("select")
    cosock.reset()
    cosock.spawn(function() cosock.socket.sleep(0.01) end)
    cosock.step(0)
    assert.equal("epoll", core.stats().backend)
    assert.is_true(readable(fd, 10))
    for _ = 1, 10 do
      if not cosock.step(0.01) then break end
    end
    L.assert_clean()
  end)
end)
