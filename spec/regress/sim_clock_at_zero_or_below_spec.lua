-- Regression (issue 35): a simulation whose clock started at 0 or below
-- broke the loop's deadlines: the loop reads a time <= 0 as "none" in
-- places (a task timer at -1, a scope's deadline at 0), so with
-- sim.on{clock = -100} every sleep ended in the stall error, and with
-- clock = 0 a scope's deadline of "now" was no deadline. The virtual clock
-- now runs ahead by whole seconds when started below 1; the program's clock
-- (cosock.timer.now(), sim.now()) reads what it asked for.

local cosock = require "cosock"
local sim = require "cosock.sim"
local scope = require "cosock.scope"
local timer = require "cosock.timer"

local socket = cosock.socket

local function run_task(fn)
  local out
  cosock.spawn(function() out = { fn() } end, "main")
  cosock.run()
  return out
end

describe("regress: a simulation whose clock starts at 0 or below", function()
  before_each(function() sim.off(); cosock.reset() end)
  after_each(function() sim.off() end)

  for _, clock in ipairs({ 0, -100, -0.5, 0.25, -1e6 }) do
    it("clock = " .. clock .. ": sleeps, timeouts and scope deadlines hold", function()
      sim.on({ clock = clock })
      assert.equal(clock, timer.now())
      local r = run_task(function()
        local out = {}
        -- (first, at the clock's start: a deadline of "now" is 0 when it starts at 0)
        out.first = { scope.timeout(0, function() socket.sleep(1); return "ran" end) }
        out.first_at = sim.now()
        socket.sleep(0.25)
        out.short = sim.now()
        socket.sleep(0.75)
        out.slept = sim.now()
        out.now = timer.now() - clock
        local tx, rx = cosock.channel.new()
        local _ = tx
        rx:settimeout(0.5)
        out.recv = { rx:receive() }
        out.recv_at = sim.now()
        out.zero = { scope.timeout(0, function() socket.sleep(1); return "ran" end) }
        out.zero_at = sim.now()
        out.half = { scope.timeout(0.5, function() socket.sleep(1); return "ran" end) }
        out.half_at = sim.now()
        local ok, err = scope.run({ deadline = timer.now() + 0.25 }, function() socket.sleep(1) end)
        out.deadline = { ok, err }
        out.deadline_at = sim.now()
        timer.sleep_until(timer.now() + 0.25)
        out.until_at = sim.now()
        local t = timer.create_oneshot(0.5)
        local _, deadline = require("cosock.core").timer_info(t)
        out.timer_deadline = deadline - timer.now() -- (the program's clock, as every time it reads)
        out.timer = { t:wait() }
        out.timer_at = sim.now()
        return out
      end)[1]
      assert.same({
        first = { nil, "timeout" }, first_at = 0,
        short = 0.25, slept = 1, now = 1,
        recv = { nil, "timeout" }, recv_at = 1.5,
        zero = { nil, "timeout" }, zero_at = 1.5,
        half = { nil, "timeout" }, half_at = 2,
        deadline = { false, "timeout" }, deadline_at = 2.25,
        until_at = 2.5,
        timer_deadline = 0.5, timer = { true }, timer_at = 3,
      }, r)
    end)
  end
end)
