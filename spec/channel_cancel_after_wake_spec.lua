-- A receiver cancelled after a message woke it but before it ran (doc/channels.md,
-- "Timeouts and cancels never leave a ghost"; doc/op.md, "Performing"): the message
-- is received once, whole or not at all. A scope's cancel lets the woken receive
-- take the message and return it, and raises at the task's next wait; a
-- handle's cancel drops the task, and the message stays for the next receive
-- (on a rendezvous, its sender waits in line until then). For unbounded,
-- bounded and rendezvous channels; a plain receive, a receive perform, and a
-- choice of a receive and a sleep. (cosock.sim: first-come order, no real time.)

local cosock = require "cosock"
local op = require "cosock.op"
local scope = require "cosock.scope"
local sim = require "cosock.sim"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local CAPACITIES = { { "unbounded", nil }, { "bounded", 1 }, { "rendezvous", 0 } }
local TAKES = {
  { "rx:receive()", function(rx) return rx:receive() end },
  { "op.recv(rx):perform()", function(rx) return op.recv(rx):perform() end },
  { "op.choice(op.recv(rx), op.sleep(5)):perform()",
    function(rx) return op.choice(op.recv(rx), op.sleep(5)):perform() end },
}

-- The receiver waits in take(rx); in one pass a sender sends "m" and, right
-- after it, a canceller cancels the receiver: its scope's cancel (scoped), or
-- its handle's (a task of no scope); then the driver receives what is left.
-- Returns what happened.
local function run(cap, take, scoped)
  local r = { log = {}, sent = "not yet" }
  local tx, rx = cosock.channel.new(cap)
  local h, s
  local function receiver()
    r.got = take(rx)
    r.log[#r.log + 1] = "received"
    local ok, err = compat.pcall(cosock.socket.sleep, 0) -- (a pcall that may wait, also on 5.1)
    r.after = ok and "went on" or err
  end
  if scoped then
    cosock.spawn(function()
      scope.run(function(sc)
        s = sc
        sc:spawn(receiver, "receiver")
      end)
    end, "owner")
  else
    h = cosock.spawn(receiver, "receiver")
  end
  cosock.spawn(function()
    cosock.socket.sleep(1) -- (the receiver waits by then)
    cosock.spawn(function() r.sent = tx:send("m") end, "sender")
    cosock.spawn(function()
      r.log[#r.log + 1] = "cancel"
      if scoped then s:cancel() else h:cancel() end
    end, "canceller")
    cosock.socket.sleep(1)
    rx:settimeout(0)
    r.left = { rx:receive() }
    cosock.socket.sleep(1) -- (a rendezvous sender returns once that receive took its message)
  end, "driver")
  cosock.run()
  return r
end

describe("a receiver cancelled after a message woke it, before it ran", function()
  before_each(function()
    cosock.reset()
    sim.on()
  end)
  after_each(function()
    sim.off()
    L.assert_clean()
  end)

  for _, c in ipairs(CAPACITIES) do
    for _, t in ipairs(TAKES) do
      it(c[1] .. ", " .. t[1] .. ", a scope's cancel: it returns the message, the next wait raises", function()
        local r = run(c[2], t[2], true)
        assert.same({ "cancel", "received" }, r.log)
        assert.equal("m", r.got)
        assert.equal(scope.cancelled, r.after)
        assert.same({ nil, "timeout" }, r.left)
        assert.is_true(r.sent)
      end)
      it(c[1] .. ", " .. t[1] .. ", a handle's cancel: the message stays for the next receive", function()
        local r = run(c[2], t[2], false)
        assert.same({ "cancel" }, r.log)
        assert.is_nil(r.got)
        assert.same({ "m" }, r.left)
        assert.is_true(r.sent)
      end)
    end
  end
end)
