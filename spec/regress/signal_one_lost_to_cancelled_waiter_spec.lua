-- Regression: signal.one woke the oldest waiter and counted it; when that task
-- was cancelled before it ran, the signal was lost although another task
-- waited. It now goes to the next waiter.

local cosock = require "cosock"
local signal = require "cosock.signal"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: signal.one to a waiter cancelled before it ran", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("passes the signal, with its arguments, to the next waiter", function()
    local got = {}
    local a = cosock.spawn(function() got[#got + 1] = { "a", signal.wait("x") } end, "a")
    cosock.spawn(function() got[#got + 1] = { "b", signal.wait("x") } end, "b")
    local woken
    cosock.spawn(function()
      socket.sleep(0)
      woken = signal.one("x", 1, nil, 3)
      a:cancel()
    end, "signaller")
    net.run()
    assert.equal(1, woken)
    assert.same({ { "b", true, 1, nil, 3 } }, got)
  end)

  it("a waiter that ran keeps its signal: a later cancel passes nothing on", function()
    local got = {}
    local a
    a = cosock.spawn(function()
      got[#got + 1] = { "a", signal.wait("x") }
      socket.sleep(10)
    end, "a")
    local b = cosock.spawn(function() got[#got + 1] = { "b", signal.wait("x") } end, "b")
    cosock.spawn(function()
      socket.sleep(0)
      signal.one("x", "v")
      socket.sleep(0.01)
      a:cancel()
      socket.sleep(0.01)
      b:cancel()
    end, "signaller")
    net.run()
    assert.same({ { "a", true, "v" } }, got)
  end)
end)
