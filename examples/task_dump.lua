-- examples/task_dump.lua: what every task is doing, on demand (cosock.tasks;
-- doc/task-dump.md). An acceptor waits for connections, a worker for jobs on
-- a channel, a poller sleeps between rounds; a monitor task writes the dump of
-- every task to standard output once they have settled, then stops them all.
-- While it runs, `kill -USR1 <pid>` writes the same dump to standard error
-- (tasks.on_signal), and a turn longer than 50 ms is warned about
-- (tasks.warnings). It prints "cosock: 5 tasks", then a header line and a
-- traceback per task:
--   task 1 "cosock.tasks.on_signal USR1" waiting 0.100 s on ossignal fd 3, timeout 1 s (spawned at examples/task_dump.lua:19)
--   task 2 "acceptor" waiting 0.100 s on recv fd 4 (spawned at examples/task_dump.lua:25)
--   task 3 "worker" waiting 0.100 s on channel receive (spawned at examples/task_dump.lua:32)
--   task 4 "poller" waiting 0.100 s on sleep 30 s (spawned at examples/task_dump.lua:38)
--   task 5 "monitor" running 0.000 s (spawned at examples/task_dump.lua:41)
-- (the times and the fds vary), and last "stopped".
local cosock = require "cosock"
local tasks = require "cosock.tasks"
local socket = cosock.socket

tasks.on_signal("USR1")                        -- kill -USR1 <pid>: the dump on stderr
tasks.warnings { turn = 0.05 }                 -- cosock: warning: task 'x' ran 0.2 s in one turn ...

local server = assert(socket.bind("127.0.0.1", 0))
local jobs_tx, jobs_rx = cosock.channel.new()

cosock.spawn(function()
  while true do
    local client = server:accept()
    if not client then break end
    client:close()
  end
end, "acceptor")
cosock.spawn(function()
  while true do
    local job = jobs_rx:receive()
    if job == nil then break end
  end
end, "worker")
cosock.spawn(function()
  while true do socket.sleep(30) end
end, "poller")
cosock.spawn(function()
  socket.sleep(0.1)
  tasks.dump(io.write)                         -- the text SIGUSR1 writes to stderr
  cosock.stop()                                -- every task, the signal's too
end, "monitor")

cosock.run()
server:close()
jobs_tx:close()
print("stopped")
