-- trace: record what the loop does (cosock.trace, doc/reference.md) while a
-- client talks to a server over loopback and a worker hands results over a
-- channel; then print, task by task, what each one waited on and what woke
-- it, and save the trace for `cosock-trace FILE` (doc/tracing.md).
--   ./scripts/run-example.sh trace [FILE]
-- The same without a line of code: COSOCK_TRACE=app.trace lua app.lua
local cosock = require "cosock"
local trace = require "cosock.trace"
local socket = cosock.socket
local FILE = ... -- (the command line's FILE; none when run by dofile)

trace.start({ size = 10000 })

local server = assert(socket.bind("127.0.0.1", 0))
local _, port = server:getsockname()
local results_tx, results_rx = cosock.channel.new()
local go_tx, go_rx = cosock.channel.new()  -- the client tells the worker to start

cosock.spawn(function()
  local c = assert(server:accept())
  server:close()
  local line = c:receive()
  c:send(line:upper() .. "\n")
  c:close()
end, "server")

cosock.spawn(function()
  go_rx:receive()
  socket.sleep(0.01)                       -- some work
  results_tx:send(42)
  results_tx:close()
end, "worker")

cosock.spawn(function()
  local c = assert(socket.connect("127.0.0.1", tonumber(port)))
  c:send("hello\n")
  print("client got: " .. c:receive())
  c:close()
  go_tx:send(true)
  print("client got from the worker: " .. results_rx:receive())
end, "client")

cosock.run()
trace.stop()

-- Task by task: each wait, and the wake that ended it.
local events = trace.events()
local names, lines = { [0] = "the loop" }, {}
for _, e in ipairs(events) do
  if e.kind == "spawn" then
    names[e.task] = e.name
    lines[e.task] = {}
  elseif e.kind == "wait" then
    local l = lines[e.task]
    l[#l + 1] = "waits on " .. e.what
  elseif e.kind == "wake" and e.cause ~= "spawn" then
    local l = lines[e.task]
    l[#l] = l[#l] .. ", woken by " .. e.cause .. (e.by ~= 0 and (" from " .. names[e.by]) or "")
  elseif e.kind == "end" then
    local l = lines[e.task]
    l[#l + 1] = "ends: " .. e.how
  end
end
for id = 1, #lines do
  print(("task %d '%s'"):format(id, names[id]))
  for _, l in ipairs(lines[id]) do print("  " .. l) end
end

local s = trace.stats()
print(("%d events recorded, %d dropped"):format(s.recorded, s.dropped))
local path = FILE or os.tmpname()
trace.save(path)
print("saved: " .. (FILE and path or "a temporary file"))
if not FILE then os.remove(path) end
