-- supervisor.lua: workers that fail are restarted, through the error handler
-- and handle:join.
--
-- Shows: cosock.set_error_handler (a failing task no longer ends cosock.run),
-- handle:join (wait for a task and get its results or its error), and a
-- handle's own fields (the supervisor notes each worker's attempt on it).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh supervisor
-- Prints, for three workers that each fail on their first tries and then
-- succeed, lines such as
--   logged: worker B (attempt 1) failed: ...: B is not ready yet
--   supervisor: worker B failed on attempt 1, restarting
--   supervisor: worker B finished on attempt 2 with 20
-- then "all workers done: A=10 B=20 C=30" and "run() returned".

local cosock = require "cosock"

-- Every task error arrives here instead of ending cosock.run().
cosock.set_error_handler(function(err, handle)
  print(("logged: %s (attempt %d) failed: %s"):format(
    handle.name, handle.attempt or 0, tostring(err):match("[^\n]*")))
end)

-- A worker that fails until its `fails` first attempts are over.
local function worker(label, fails, attempt)
  cosock.socket.sleep(0.01 * attempt)
  if attempt <= fails then error(label .. " is not ready yet") end
  return (label:byte() - 64) * 10     -- A -> 10, B -> 20, C -> 30
end

local results = {}

local function supervise(label, fails)
  for attempt = 1, 5 do
    local h = cosock.spawn(function() return worker(label, fails, attempt) end, "worker " .. label)
    h.attempt = attempt                -- a handle is a table: keep our own notes on it
    local ok, value = h:join()
    if ok then
      print(("supervisor: worker %s finished on attempt %d with %s"):format(label, attempt, value))
      results[#results + 1] = label .. "=" .. value
      return
    end
    print(("supervisor: worker %s failed on attempt %d, restarting"):format(label, attempt))
  end
end

cosock.spawn(function()
  local supervisors = {
    cosock.spawn(function() supervise("A", 0) end, "supervisor A"),
    cosock.spawn(function() supervise("B", 1) end, "supervisor B"),
    cosock.spawn(function() supervise("C", 2) end, "supervisor C"),
  }
  for _, s in ipairs(supervisors) do s:join() end
  table.sort(results)
  print("all workers done: " .. table.concat(results, " "))
end, "main")

cosock.run()
print("run() returned")
