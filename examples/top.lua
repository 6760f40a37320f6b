-- top.lua: which task is slow? A top-like table from the per-task accounting.
--
-- Shows: cosock.set_accounting(true) (busy times), the resumes / busy /
-- allocated fields of cosock.get_thread_metadata(), and cosock.stats() (the
-- loop's own totals). See doc/accounting-and-watchdog.md.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh top
-- Workers run for about two seconds: "hasher" does a lot of Lua work per
-- turn, "logger" builds big strings, "chatter" and "echo" pass many small
-- messages over channels, "sleepy" wakes now and then. Every half second a
-- monitor task prints, sorted by busy time, one line per task:
--     TASK        RESUMES   BUSY ms  BUSY %   ALLOC KB  STATUS
--     hasher           20     325.1    64.9        0.3  suspended
--     logger           23      14.2     2.8     2947.2  suspended
--     chatter         752       1.2     0.2        0.4  suspended
--     ...
-- and a line for the loop itself (tasks, passes, polls, its own busy time).
-- The figures depend on the machine; hasher comes first, and logger has
-- allocated the most. After four tables the workers stop and "run()
-- returned" is printed.

local cosock = require "cosock"
local socket = cosock.socket

cosock.set_accounting(true)

local TABLES = 4                    -- tables printed before the workers stop
local EVERY = 0.5                   -- seconds between two tables
local start = socket.gettime()
local stop = false
local function running() return not stop end

-- Lots of Lua work in each turn: the task to find.
local hasher = cosock.spawn(function()
  local h = 0
  while running() do
    for i = 1, 500000 do h = (h * 31 + i) % 1000000007 end
    socket.sleep(0.02)
  end
end, "hasher")

-- Allocates: a 64 KB log line every 20 ms.
local logger = cosock.spawn(function()
  local n = 0
  while running() do
    local line = string.rep(string.char(65 + n % 26), 64 * 1024)
    n = n + #line // (64 * 1024)
    socket.sleep(0.02)
  end
end, "logger")

-- Many short turns: a ping-pong over two channels.
local to_echo, from_chatter = cosock.channel.new()
local to_chatter, from_echo = cosock.channel.new()
local echo = cosock.spawn(function()
  while true do
    local m = from_chatter:receive()
    if m == nil then break end
    to_chatter:send(m)
  end
end, "echo")
local chatter = cosock.spawn(function()
  while running() do
    to_echo:send("ping")
    from_echo:receive()
    socket.sleep(0.001)
  end
  to_echo:close()
end, "chatter")

-- Nearly idle.
local sleepy = cosock.spawn(function()
  while running() do socket.sleep(0.3) end
end, "sleepy")

local function print_table(elapsed)
  local rows = cosock.get_thread_metadata()
  table.sort(rows, function(a, b) return a.busy > b.busy end)
  print(("---- after %.1f s ----"):format(elapsed))
  print(("%-10s %8s %9s %7s %10s  %s"):format("TASK", "RESUMES", "BUSY ms", "BUSY %", "ALLOC KB", "STATUS"))
  for _, t in ipairs(rows) do
    print(("%-10s %8d %9.1f %7.1f %10.1f  %s"):format(tostring(t.name), t.resumes,
      t.busy * 1000, 100 * t.busy / elapsed, t.allocated / 1024, t.status))
  end
  local s = cosock.stats()
  print(("loop: %d tasks (%d ready, %d parked), %d passes, %d polls, own busy %.1f ms"):format(
    s.tasks, s.ready, s.parked, s.passes, s.polls, s.busy * 1000))
end

cosock.spawn(function()
  for _ = 1, TABLES do
    socket.sleep(EVERY)
    print_table(socket.gettime() - start)
  end
  stop = true
  for _, h in ipairs({ hasher, logger, sleepy }) do h:cancel() end -- (chatter closes echo's channel)
end, "monitor")

cosock.run()
print("run() returned")
