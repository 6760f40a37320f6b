-- Regression (the protocol fuzzer, twice on LuaJIT under load: "an op send
-- returned true, its message was never received"). The watchdog kept its
-- "error" interrupt out of cosock's own Lua code, but not its reporter: with
-- the "report" action (the default) the reporter ran wherever the hook
-- looked, inside a perform too, and what it raised was raised there, after
-- the perform had taken its message. On Lua 5.1, 5.2 and LuaJIT the lifted
-- wrappers of the C functions that wait (a channel's receive, a send) were
-- not counted as cosock's code either, so the "error" interrupt fell inside
-- them as well. Either way a call that had taken a message raised, and the
-- message was gone.
--
-- Here the watchdog is due at every look, and its looks come every 1000
-- instructions of a turn, counted from the turn's start. A task, for each
-- count of padding instructions P from 0 to 1000, starts a turn, queues one
-- message if none is queued, runs P instructions, then takes the message in
-- a pcall: so the look falls at each instruction of the take in turn (the
-- last P, some 200, have it fall in the padding: no take). A take that
-- raised must have taken nothing. (Instructions are counted, not
-- timed: the result is the same on every machine.)

local cosock = require "cosock"
local op = require "cosock.op"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

-- The scan, with the watchdog's action and reporter. take(rx) -> f, a: the
-- take is pcall(f, a), f a function of cosock's own (so that the pcall's
-- result says whether the take itself raised: a function of the spec's
-- around it could be interrupted after the take returned). Returns the
-- messages lost (taken by a take that raised) and the takes made.
local function scan(action, reporter, take)
  local tx, rx = cosock.channel.new()
  local f, a = take(rx)
  local lost, takes, pad = 0, 0, -1
  local sleep = cosock.socket.sleep
  cosock.set_error_handler(function() end)   -- (an interrupt outside the pcalls ends the task)
  cosock.set_watchdog(1e-9, action, reporter)
  while pad < 1000 do
    cosock.spawn(function()
      while pad < 1000 do
        compat.pcall(sleep, 0)                -- a new turn: the looks count from here (a pcall that may wait, also on 5.1)
        pad = pad + 1
        pcall(function()
          if #rx.link.queue == 0 then tx:send(pad) end
          for _ = 1, pad do end             -- (one instruction a round)
          local ok = pcall(f, a)
          takes = takes + 1
          if not ok and #rx.link.queue == 0 then lost = lost + 1 end
        end)
      end
    end, "scan")
    cosock.run()
  end
  cosock.set_watchdog(nil)
  cosock.set_error_handler(nil)
  return lost, takes
end

local function raising_reporter() error("the reporter raised", 0) end
local function quiet_reporter() end

local TAKES = {
  { "op.recv(rx):perform()", function(rx) return op.perform, op.recv(rx) end },
  { "op.choice(op.recv(rx), op.never()):perform()",
    function(rx) return op.perform, op.choice(op.recv(rx), op.never()) end },
  { "rx:receive()", function(rx) return rx.receive, rx end },
}

describe("regress: the watchdog inside cosock's own code", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    cosock.set_watchdog(nil)
    cosock.set_error_handler(nil)
    cosock.reset()
    L.assert_clean()
  end)

  for _, t in ipairs(TAKES) do
    it("\"report\" with a reporter that raises: " .. t[1] .. " never raises once it took its message", function()
      local lost, takes = scan("report", raising_reporter, t[2])
      assert.is_true(takes > 600, "the scan made too few takes: " .. takes)
      assert.equal(0, lost)
    end)
    it("\"error\": " .. t[1] .. " never raises once it took its message", function()
      local lost, takes = scan("error", quiet_reporter, t[2])
      assert.is_true(takes > 600, "the scan made too few takes: " .. takes)
      assert.equal(0, lost)
    end)
  end
end)
