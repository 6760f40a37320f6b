-- timer_alarms.lua: the alarms of cosock.timer, one after the other in a task.
--
-- Shows: timer.now() (the loop's monotonic clock), timer.sleep_until(t),
-- timer.every(s, fn, ...) stopped by fn returning false, timer.after(s, fn,
-- ...) and what handle:join gives for it, an after cancelled before it fires,
-- timer.timeout(s) (a receiver that closes), and a timer object's wait,
-- handled, settimeout and cancel (create_oneshot / create_interval).
-- See doc/timers.md and doc/reference.md (cosock.timer).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh timer_alarms
-- It prints, in this order:
--   now() never goes back: true
--   sleep_until: woke at or after the deadline: true
--   every: tick 1 (arg: x)
--   every: tick 2 (arg: x)
--   every: tick 3 (arg: x), returning false
--   every's task ended: true
--   after: fn(10, 20) called
--   after's join: true 30
--   cancelled after's join: nil cancelled
--   timeout channel: nil closed
--   oneshot wait: true
--   oneshot handled: true
--   oneshot wait again: nil handled
--   interval wait with settimeout(0.01): nil timeout
--   interval wait after cancel: nil cancelled
--   run() returned

local cosock = require "cosock"
local timer = cosock.timer

-- print(label, values...) with one space between, nil and the count kept.
local function show(label, ...)
  local out = { label }
  for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
  print(table.concat(out, " "))
end

cosock.spawn(function()
  local a = timer.now()
  local b = timer.now()
  print("now() never goes back: " .. tostring(b >= a))

  local deadline = timer.now() + 0.03
  timer.sleep_until(deadline)
  print("sleep_until: woke at or after the deadline: " .. tostring(timer.now() >= deadline))

  -- every: fn(...) on a grid of 20 ms; returning false (not nil) ends it.
  local ticks = 0
  local ev = timer.every(0.02, function(arg)
    ticks = ticks + 1
    if ticks == 3 then
      print("every: tick 3 (arg: " .. arg .. "), returning false")
      return false
    end
    print("every: tick " .. ticks .. " (arg: " .. arg .. ")")
  end, "x")
  print("every's task ended: " .. tostring((ev:join())))

  -- after: fn(...) once, in a task of its own; its results are the task's.
  local af = timer.after(0.02, function(x, y)
    print("after: fn(" .. x .. ", " .. y .. ") called")
    return x + y
  end, 10, 20)
  show("after's join:", af:join())

  -- An after cancelled before its time never calls fn.
  local never = timer.after(0.05, function() print("this is never printed") end)
  never:cancel()
  show("cancelled after's join:", never:join())

  -- timeout(s): a receiver that is closed s seconds from now.
  local rx = timer.timeout(0.02)
  show("timeout channel:", rx:receive())

  -- Timer objects: due once (oneshot) or on a grid (interval) until handled.
  local once = timer.create_oneshot(0.02)
  show("oneshot wait:", once:wait())
  show("oneshot handled:", once:handled())
  show("oneshot wait again:", once:wait())

  local iv = timer.create_interval(10)
  iv:settimeout(0.01)
  show("interval wait with settimeout(0.01):", iv:wait())
  iv:cancel()
  show("interval wait after cancel:", iv:wait())
end, "alarms")

cosock.run()
print("run() returned")
