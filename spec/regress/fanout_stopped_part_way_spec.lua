-- Regression: a fan-out (a wake of many waiters) that an error stopped part-way
-- (the watchdog's "error" interrupt, a failed allocation, a waker that raised)
-- left the waiters it had not reached asleep for good: the op receive hub,
-- cond:signal(), with_nack's nacks, signal.all and a handle's joiners. Now no
-- waiter is asleep that the state says was woken, a later send or signal wakes
-- those still waiting, and the error still reaches the caller.

local cosock = require "cosock"
local op = require "cosock.op"
local signal = require "cosock.signal"
local interrupt = require "spec.support.interrupt"
local net = require "spec.support.net"

local socket = cosock.socket
local W = 40

-- For each n: W waiters started by spawn_waiter(i, done), then fire() run in a
-- task with an interrupt at its n-th instruction, then again() without; every
-- waiter must end exactly once.
local function sweep(ns, setup)
  for _, n in ipairs(ns) do
    cosock.reset()
    local ended, first = {}, nil
    local spawn_waiter, fire, again = setup()
    for i = 1, W do
      cosock.spawn(function() spawn_waiter(i); ended[#ended + 1] = i end, "waiter " .. i)
    end
    cosock.spawn(function()
      socket.sleep(0)
      first = { interrupt.pcall(n, fire) }
      socket.sleep(0)
      again()
    end, "firer")
    net.run()
    assert.equal(W, #ended, "n = " .. n)
    local seen = {}
    for _, i in ipairs(ended) do
      assert.is_nil(seen[i])
      seen[i] = true
    end
    assert.is_not_nil(first)
  end
end

local NS = { 1, 5, 20, 60, 150, 400, 1000, 3000 }

describe("regress: a fan-out stopped part-way", function()
  after_each(function() net.check_clean() end)

  it("op receive hub: a later send wakes the performs not woken, the interrupted send sent nothing", function()
    local got = 0
    sweep(NS, function()
      local tx, rx = cosock.channel.new()
      got = 0
      return function()
        local v = op.recv(rx):perform()
        if v == "m" then got = got + 1 end
      end, function()
        assert(tx:send("x-" .. 0))
      end, function()
        for _ = 1, W do tx:send("m") end
      end
    end)
  end)

  it("cond:signal(): signal again wakes the rest", function()
    sweep(NS, function()
      local c = op.cond()
      return function() c:wait_op():perform() end,
        function() c:signal() end,
        function() c:signal() end
    end)
  end)

  it("signal.all: a second signal.all wakes the rest", function()
    sweep(NS, function()
      return function() signal.wait("fan") end,
        function() signal.all("fan") end,
        function() signal.all("fan") end
    end)
  end)

  it("with_nack: the nacks of a perform that chose another branch all fire", function()
    sweep({ 1, 10, 40, 100, 300, 1000 }, function()
      local nack
      local ready = op.cond()
      local chooser_done = false
      cosock.spawn(function()
        op.choice(op.with_nack(function(n) nack = n; return op.never() end), op.always(1)):perform()
        chooser_done = true
        ready:signal()
      end, "chooser")
      return function() ready:wait_op():perform(); nack:perform() end,
        function() end,
        function() end
    end)
  end)

  it("a handle's joiners are all woken when one of its wakers raised", function()
    local h, gate
    local raised
    cosock.reset()
    local ended = 0
    gate = op.cond()
    h = cosock.spawn(function() gate:wait_op():perform() end, "joined")
    h:setwaker("recvr", function() error("waker raised") end)
    for i = 1, W do
      cosock.spawn(function() op.join(h):perform(); ended = ended + 1 end, "joiner " .. i)
    end
    cosock.spawn(function()
      socket.sleep(0)
      raised = { pcall(gate.signal, gate) }
    end, "opener")
    local ok = pcall(cosock.run)
    if not ok then pcall(cosock.run) end
    assert.equal(W, ended)
    cosock.reset()
  end)
end)
