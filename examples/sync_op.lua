-- sync_op.lua: cosock.sync's locks and semaphores with cosock.op and scopes.
--
-- Shows: sem:acquire_op() in a choice with a channel message and a timeout
-- (the lock is taken only when the acquire is the operation chosen); a
-- semaphore bounding how many of a scope's workers run at once; a scope's
-- end watched from another task with s:wait_op().
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh sync_op
-- (or: lua5.3 examples/sync_op.lua with cosock on LUA_PATH/LUA_CPATH)
-- Prints:
--   choice: message 'config changed' (lock held: 0)
--   choice: lock (lock held: 1)
--   workers: 6 done, at most 2 at once
--   watcher: the scope ended: true 6

local cosock = require "cosock"
local op, sync, scope = cosock.op, cosock.sync, cosock.scope
local sleep = cosock.socket.sleep

local lock = sync.lock()
local config_tx, config_rx = cosock.channel.new()
local scope_tx, scope_rx = cosock.channel.new()

-- Holds the lock a while; a message comes meanwhile.
cosock.spawn(function()
  lock:acquire()
  sleep(0.01)
  config_tx:send("config changed")
  sleep(0.01)
  lock:release()
end, "holder")

-- Whichever comes first: the lock, a message, or a second passing.
local function next_event()
  return op.choice(
    lock:acquire_op():wrap(function() return "lock" end),
    op.recv(config_rx):wrap(function(m) return "message '" .. m .. "'" end),
    op.sleep(1):wrap(function() return "timeout" end)):perform()
end

cosock.spawn(function()
  sleep(0.001)
  for _ = 1, 2 do
    print(("choice: %s (lock held: %d)"):format(next_event(), lock:held()))
  end
  lock:release()
end, "chooser")

-- Six workers, at most two at a time, in a scope another task watches.
cosock.spawn(function()
  local permits, running, most = sync.semaphore(2), 0, 0
  local ok, done = scope.run(function(s)
    scope_tx:send(s)
    local count = 0
    for i = 1, 6 do
      s:spawn(function()
        permits:acquire()
        running = running + 1
        if running > most then most = running end
        sleep(0.002)
        running = running - 1
        count = count + 1
        permits:release()
      end, "worker " .. i)
    end
    sleep(0.05) -- (the workers end meanwhile)
    return count
  end)
  assert(ok)
  print(("workers: %d done, at most %d at once"):format(done, most))
end, "workers")

cosock.spawn(function()
  local s = scope_rx:receive()
  local ok, count = op.choice(s:wait_op(),
    op.sleep(5):wrap(function() return "still running" end)):perform()
  print("watcher: the scope ended: " .. tostring(ok) .. " " .. tostring(count))
end, "watcher")

cosock.run()
