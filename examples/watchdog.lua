-- watchdog.lua: the watchdog catching a task stuck in a busy loop.
--
-- Shows: cosock.set_watchdog(seconds, action, reporter) with the "report"
-- and "error" actions, a reporter of the program's own, and the error taking
-- the normal path (cosock.set_error_handler, handle:join). See
-- doc/accounting-and-watchdog.md.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh watchdog
-- A "ticker" task ticks every 50 ms throughout (and misses its ticks while
-- another task hogs the loop). Phase 1 (action "report"): a "parser" task
-- takes 0.35 s without yielding; the watchdog (limit 0.1 s) reports it at
-- 0.1, 0.2 and 0.3 s, naming it and the line where it spins, and the parser
-- still finishes. Phase 2 (action "error"): a "stuck" task loops forever;
-- the watchdog reports it, then raises in it, the error handler logs it, a
-- join sees it, and the ticker carries on. Prints
--   watchdog: task 'parser' ran 0.1 s without yielding   (0.103, 0.203, ...)
--     at .../examples/watchdog.lua:53: in function <.../examples/watchdog.lua:51>
--   ... (twice more)
--   join(parser): true (it finished despite the reports)
--   watchdog: task 'stuck' ran 0.1 s without yielding
--     at .../examples/watchdog.lua:60: in function <.../examples/watchdog.lua:58>
--   error handler: stuck stopped: .../examples/watchdog.lua:60: task 'stuck' ran 0.1 s without yielding
--   join(stuck): false
--   ticker: 8 ticks
-- then "run() returned".

local cosock = require "cosock"
local socket = cosock.socket

-- The reporter: the message and the first line of the traceback that points
-- into the program (where the task spins).
local function reporter(r)
  print("watchdog: " .. r.message)
  print("  at " .. (r.traceback:match("\n%s*([^\n]*examples/watchdog%.lua[^\n]*)") or "?"))
end

cosock.set_error_handler(function(err, handle)
  print(("error handler: %s stopped: %s"):format(handle.name, tostring(err):match("[^\n]*")))
end)

local ticks, done = 0, false
cosock.spawn(function()
  while not done do
    ticks = ticks + 1
    socket.sleep(0.05)
  end
  print(("ticker: %d ticks"):format(ticks))
end, "ticker")

-- Slow, but ends: parses a "document" in one go, without yielding.
local function parse(seconds)
  local t0, n = socket.gettime(), 0
  while socket.gettime() - t0 < seconds do n = n + 1 end
  return n
end

-- Never ends.
local function spin()
  local x = 0
  while true do x = (x + 1) % 7 end
end

cosock.spawn(function()
  -- Phase 1: report only.
  cosock.set_watchdog(0.1, "report", reporter)
  local parser = cosock.spawn(function() return parse(0.35) end, "parser")
  local ok = parser:join(5)
  print("join(parser): " .. tostring(ok) .. " (it finished despite the reports)")

  -- Phase 2: report, then stop the task with an error.
  cosock.set_watchdog(0.1, "error", reporter)
  local stuck = cosock.spawn(spin, "stuck")
  ok = stuck:join(5)
  print("join(stuck): " .. tostring(ok))
  socket.sleep(0.3)
  done = true
end, "main")

cosock.run()
print("run() returned")
