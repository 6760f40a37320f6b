-- when_signals.lua: a predicate that raises a signal, and the calls around it.
--
-- Shows: cosock.when.signal_on(pred, name, ...) raising a signal to every
-- waiter once a predicate holds; cosock.signal.wait (with and without a
-- timeout), signal.on and signal.one (the on handler is woken first: it
-- was registered when signal.on was called, the waiters only when their
-- tasks first ran); cosock.when.wait with a timeout and
-- with a predicate that is true already; when.set_interval / get_interval
-- (how often the loop looks at predicates while no task runs). See
-- doc/signals-and-predicates.md and doc/reference.md (cosock.when).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh when_signals
-- It prints, in this order:
--   interval: 0.01
--   set_interval(0.005) returned 0.01; now 0.005
--   level 1
--   level 2
--   level 3
--   on handler: tank full 3
--   waiter 1: true tank full 3
--   waiter 2: true tank full 3
--   signal_on's task woke: true 3
--   when.wait(level > 10, 0.02): nil timeout
--   when.wait(level == 3): true 3
--   signal.one with nobody waiting: 0
--   signal.wait("quiet", 0.01): nil timeout
--   interval back to 0.01
--   run() returned

local cosock = require "cosock"
local signal, when = cosock.signal, cosock.when

local function show(label, ...)
  local out = { label }
  for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
  print(table.concat(out, " "))
end

local level = 0

cosock.spawn(function()
  show("interval:", when.get_interval())
  local previous = when.set_interval(0.005)
  print("set_interval(0.005) returned " .. previous .. "; now " .. when.get_interval())

  -- Two tasks wait for the signal "full", and a one-shot handler too.
  for n = 1, 2 do
    cosock.spawn(function()
      show("waiter " .. n .. ":", signal.wait("full"))
    end, "waiter " .. n)
  end
  signal.on("full", function(...) show("on handler:", ...) end)

  -- The loop evaluates the predicate; once true, "full" goes to every waiter
  -- with the arguments given here.
  local raiser = when.signal_on(function() return level >= 3 end, "full", "tank full", 3)

  cosock.spawn(function()
    for i = 1, 3 do
      cosock.socket.sleep(0.01)
      level = i
      print("level " .. i)
    end
  end, "filler")

  -- signal_on's task returns how many waiters signal.all woke.
  show("signal_on's task woke:", raiser:join())

  show("when.wait(level > 10, 0.02):", when.wait(function() return level > 10 end, 0.02))
  show("when.wait(level == 3):", when.wait(function() return level == 3, level end))
  show("signal.one with nobody waiting:", signal.one("full"))
  show('signal.wait("quiet", 0.01):', signal.wait("quiet", 0.01))

  when.set_interval(previous)
  print("interval back to " .. when.get_interval())
end, "main")

cosock.run()
print("run() returned")
