-- bench/soak.lua: a mixed workload for a given time, to see that memory and
-- fds stay flat. Run it with scripts/soak.sh SECONDS [REPORT_EVERY].
--
-- What runs, all on 127.0.0.1 in one loop:
--   - an echo server task (a handler task per connection);
--   - clients started at a steady pace: each connects, sends a few lines,
--     checks the echoes and closes; every 7th is cancelled while it waits,
--     every 11th closes without reading its answers (a reset for the server);
--   - channel pipelines: a producer, a consumer with select and a timeout;
--   - sleepers with random short sleeps, a canceller that cancels some;
--   - a task raising an error now and then, through the error handler
--     (cosock.set_error_handler), which counts it; and a joiner for each
--     erroring task, which must get the error back from join; an error
--     handler that meets an unexpected error lets it end run.
-- Every REPORT_EVERY seconds (default 5) it prints one line: RSS, Lua heap
-- after a full collection, open fds, live tasks, and the counts so far. At
-- the end it compares the last line with the one at a fifth of the run (the
-- warm-up is over by then) and prints "flat" or what grew; it exits 1 when
-- something grew past its allowance (fds +8, Lua heap +25% + 256 KiB, RSS
-- +25% + 4 MiB).

local cosock = require "cosock"
local core = require "cosock.core"
local socket = cosock.socket
local channel = cosock.channel

local DURATION = tonumber(arg and arg[1]) or 60
local EVERY = tonumber(arg and arg[2]) or 5
local CLIENTS_PER_SECOND = 200
local LIMIT = 2 -- seconds: every socket wait has this timeout

local counts = { conns = 0, lines = 0, msgs = 0, cancels = 0, errors = 0, joined = 0, resets = 0 }
local started = core.monotime()
local stop = false
local cancellable = {} -- handles a canceller may pick (weak: finished ones go)
setmetatable(cancellable, { __mode = "k" })

local function rss_kb()
  local f = io.open("/proc/self/status", "r")
  if not f then return -1 end
  local text = f:read("*a")
  f:close()
  return tonumber(text:match("VmRSS:%s*(%d+)")) or -1
end

local PID = (function()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("*n")
  f:close()
  return pid
end)()

-- Open fds of this process (the pipe of the popen below counts as one).
local function open_fds()
  local p = io.popen("ls /proc/" .. PID .. "/fd 2>/dev/null | wc -l")
  local n = p:read("*n")
  p:close()
  return n or -1
end

-- the echo server
local port
cosock.spawn(function()
  local srv = assert(socket.bind("127.0.0.1", 0))
  port = select(2, srv:getsockname())
  srv:settimeout(0.1)
  while not stop do
    local c = srv:accept()
    if c then
      counts.conns = counts.conns + 1
      c:settimeout(LIMIT)
      cosock.spawn(function()
        while true do
          local line, err = c:receive("*l")
          if not line then
            if err ~= "closed" then counts.resets = counts.resets + 1 end
            break
          end
          local ok, serr = c:send(line:upper() .. "\n")
          if not ok then if serr ~= "closed" then counts.resets = counts.resets + 1 end break end
        end
        c:close()
      end, "handler")
    end
  end
  srv:close()
end, "server")

local function client(i)
  local c = assert(socket.tcp())
  c:settimeout(LIMIT)
  local ok, err = c:connect("127.0.0.1", port)
  if not ok then c:close() error("connect: " .. tostring(err)) end
  for j = 1, 3 do
    assert(c:send(("client %d line %d\n"):format(i, j)))
    if i % 11 == 0 then break end -- goes away without reading
    local line = assert(c:receive("*l"))
    assert(line == ("CLIENT %d LINE %d"):format(i, j), line)
    counts.lines = counts.lines + 1
  end
  c:close()
end

-- clients at a steady pace
cosock.spawn(function()
  local i = 0
  while not port do socket.sleep(0.01) end
  while not stop do
    for _ = 1, CLIENTS_PER_SECOND / 50 do
      i = i + 1
      local h = cosock.spawn(function() client(i) end, "client")
      if i % 7 == 0 then cancellable[h] = true end
    end
    socket.sleep(0.02)
  end
end, "client starter")

-- channel pipelines
for p = 1, 4 do
  local tx, rx = channel.new()
  cosock.spawn(function()
    local n = 0
    while not stop do
      n = n + 1
      tx:send(n)
      if n % 50 == 0 then socket.sleep(0.005) end
    end
    tx:close()
  end, "producer " .. p)
  cosock.spawn(function()
    while true do
      local r, _, err = socket.select({ rx }, nil, 0.5)
      if r then
        local v, rerr = rx:receive()
        if v == nil then assert(rerr == "closed", rerr) break end
        counts.msgs = counts.msgs + 1
      elseif err ~= "timeout" then
        error(err)
      elseif stop then
        break
      end
    end
  end, "consumer " .. p)
end

-- sleepers, a canceller, an erroring task now and then
cosock.spawn(function()
  local k = 0
  while not stop do
    k = k + 1
    local h = cosock.spawn(function() socket.sleep(0.001 * (k % 20)) end, "sleeper")
    if k % 3 == 0 then cancellable[h] = true end
    if k % 100 == 0 then
      local e = cosock.spawn(function() error("soak: planned error " .. k) end, "erroring")
      cosock.spawn(function()
        local ok, err = e:join(LIMIT)
        if ok ~= false or not tostring(err):find("soak: planned error", 1, true) then
          error("soak: join of an erroring task gave " .. tostring(ok) .. ", " .. tostring(err))
        end
        counts.joined = counts.joined + 1
      end, "joiner")
    end
    socket.sleep(0.002)
  end
end, "sleeper starter")
cosock.spawn(function()
  while not stop do
    socket.sleep(0.01)
    for h in pairs(cancellable) do
      if h:is_alive() then h:cancel() counts.cancels = counts.cancels + 1 end
      cancellable[h] = nil
    end
  end
end, "canceller")

-- the reporter
local lines = {}
local function report()
  collectgarbage()
  local st = core.stats()
  local r = {
    t = core.monotime() - started, rss = rss_kb(), heap = collectgarbage("count"),
    fds = open_fds(), tasks = st.tasks,
  }
  lines[#lines + 1] = r
  print(("%6.0fs  rss %7d KiB  lua %8.0f KiB  fds %4d  tasks %4d  | conns %d lines %d msgs %d cancels %d errors %d joined %d resets %d")
    :format(r.t, r.rss, r.heap, r.fds, r.tasks, counts.conns, counts.lines, counts.msgs,
      counts.cancels, counts.errors, counts.joined, counts.resets))
  io.stdout:flush()
end
cosock.spawn(function()
  while core.monotime() - started < DURATION do
    socket.sleep(EVERY)
    report()
  end
  stop = true
end, "reporter")

print(("soak: %d s, a line every %d s (pid %d)"):format(DURATION, EVERY, PID))
cosock.set_error_handler(function(err)
  if not tostring(err):find("soak: planned error", 1, true) then error(err, 0) end
  counts.errors = counts.errors + 1
end)
local ok, err = pcall(cosock.run)
if not ok then
  print("soak: unexpected error out of run: " .. tostring(err))
  os.exit(1)
end
local st = core.stats()
assert(st.tasks == 0 and st.fds == 0 and st.timers == 0, "the loop is not empty at the end")

-- flat?
local base = lines[math.max(1, math.floor(#lines / 5))]
local last = lines[#lines]
local grew = {}
if last.fds > base.fds + 8 then grew[#grew + 1] = ("fds %d -> %d"):format(base.fds, last.fds) end
if last.heap > base.heap * 1.25 + 256 then grew[#grew + 1] = ("lua heap %.0f -> %.0f KiB"):format(base.heap, last.heap) end
if last.rss > base.rss * 1.25 + 4096 then grew[#grew + 1] = ("rss %d -> %d KiB"):format(base.rss, last.rss) end
if #grew == 0 then
  print(("soak: flat (from %.0fs to %.0fs: rss %d -> %d KiB, lua %.0f -> %.0f KiB, fds %d -> %d)")
    :format(base.t, last.t, base.rss, last.rss, base.heap, last.heap, base.fds, last.fds))
else
  print("soak: GREW: " .. table.concat(grew, ", "))
  os.exit(1)
end
