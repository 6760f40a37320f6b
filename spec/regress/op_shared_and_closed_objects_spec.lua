-- Regression: one op.timer(t) or op.readable(sock) performed by two tasks at
-- once raised "waker already set" (op.md: an operation may be performed any
-- number of times, by any tasks); op.readable on a closed socket re-waited at
-- once for ever (a busy loop); timer.every(s) with a tiny s never yielded.

local cosock = require "cosock"
local op = require "cosock.op"
local timer = require "cosock.timer"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: op on shared and closed objects, tiny intervals", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("one op.timer performed by three tasks at once: one handles it, the others see it handled", function()
    local t = timer.create_oneshot(0.01)
    local r = {}
    for i = 1, 3 do
      cosock.spawn(function() r[i] = { op.timer(t):perform() } end, "t" .. i)
    end
    net.run()
    local handled, first = 0, 0
    for i = 1, 3 do
      if r[i][1] == true then first = first + 1 elseif r[i][2] == "handled" then handled = handled + 1 end
    end
    assert.same({ 1, 2 }, { first, handled })
  end)

  it("one op.readable performed by three tasks at once: all see the socket readable", function()
    local n = 0
    cosock.spawn(function()
      local c, s = net.pair()
      local ro = op.choice(op.readable(c), op.sleep(2))
      for i = 1, 3 do
        cosock.spawn(function() if ro:perform() == c then n = n + 1 end end, "r" .. i)
      end
      socket.sleep(0.01)
      s:send("x")
      socket.sleep(0.05)
      c:close(); s:close()
    end, "io")
    net.run()
    assert.equal(3, n)
  end)

  it("op.readable on a socket closed before the perform waits without a busy loop", function()
    local r, resumes
    cosock.spawn(function()
      local c, s = net.pair()
      c:close()
      r = op.choice(op.readable(c), op.sleep(0.05):wrap(function() return "slept" end)):perform()
      for _, m in pairs(cosock.get_thread_metadata()) do
        if m.name == "p" then resumes = m.resumes end
      end
      s:close()
    end, "p")
    net.run()
    assert.equal("slept", r)
    assert.is_true(resumes < 10, "resumed " .. tostring(resumes) .. " times")
  end)

  it("op.readable on a socket closed while the perform waits: no busy loop either", function()
    local r, resumes
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function() socket.sleep(0.01); c:close() end, "closer")
      r = op.choice(op.readable(c), op.sleep(0.08):wrap(function() return "slept" end)):perform()
      for _, m in pairs(cosock.get_thread_metadata()) do
        if m.name == "p" then resumes = m.resumes end
      end
      s:close()
    end, "p")
    net.run()
    assert.is_true(r == "slept" or r ~= nil) -- ready (closing woke it) or its deadline
    assert.is_true(resumes < 10, "resumed " .. tostring(resumes) .. " times")
  end)

  it("with set_close_wakes(true) op.readable on a closed socket is ready (the socket)", function()
    cosock.set_close_wakes(true)
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:close()
      r = op.choice(op.readable(c), op.sleep(1):wrap(function() return "slept" end)):perform()
      r = r == c and "socket" or r
      s:close()
    end, "p")
    net.run()
    cosock.set_close_wakes(false)
    assert.equal("socket", r)
  end)

  it("timer.every with an interval below the clock's resolution lets the other tasks run", function()
    local calls, other = 0, 0
    local h = timer.every(1e-9, function() calls = calls + 1 end)
    cosock.spawn(function()
      for _ = 1, 5 do
        other = other + 1
        socket.sleep(0)
      end
      h:cancel()
    end, "other")
    net.run()
    assert.equal(5, other)
    assert.is_true(calls >= 1)
  end)
end)
