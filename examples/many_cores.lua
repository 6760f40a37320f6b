-- many_cores: a service that outgrows one core runs as N processes, each with
-- its own cosock loop, all listening on one port with SO_REUSEPORT (the
-- kernel spreads the connections among them). No threads in a Lua state.
--   lua many_cores.lua [N]          starts N workers (default 2), makes 40
--                                   connections to them, stops them with SIGTERM
--   lua many_cores.lua worker PORT  one worker (PORT 0: any; it prints it)
-- The launcher prints:
--   2 workers listening on one port
--   40 connections answered by 2 workers
--   every worker stopped on SIGTERM; connections served: 40
-- doc/service.md has the recipe; bench/run's reuseport rows measure it.
local cosock = require "cosock"
local socket = cosock.socket
io.stdout:setvbuf("line")

local function pid()
  return io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
end

-- A worker: its own listening socket on the shared port, its own loop.
local function worker(port)
  local server = assert(socket.tcp4())          -- (tcp() makes its fd only at bind)
  assert(server:setoption("reuseport", true))    -- before bind, in every worker
  assert(server:bind("127.0.0.1", port))
  assert(server:listen(128))
  local served = 0
  cosock.spawn(function()
    while true do
      local c = server:accept()
      if not c then break end
      cosock.spawn(function()
        c:settimeout(10)
        local line = c:receive("*l")
        if line then c:send(pid() .. " " .. line .. "\n") end
        c:close()
        served = served + 1
      end, "connection")
    end
  end, "acceptor")
  cosock.spawn(function()
    local rx = cosock.ossignal.receiver("TERM", "INT")
    print("worker " .. pid() .. " listening " .. select(2, server:getsockname()))
    rx:receive()
    server:close()
    cosock.stop()
  end, "signals")
  cosock.run()
  print("served " .. served)
end

-- Starts a worker process (this file, or script) on port; returns its pid,
-- port and output.
local function start_worker(port, script)
  -- this interpreter; $LUA instead when set (a wrapper that runs it, as
  -- under emulation, where arg[-1] is a binary only the emulator runs)
  local lua = os.getenv("LUA") or arg[-1] or "lua5.3"
  local out = io.popen(("LUA_PATH=%q LUA_CPATH=%q exec %s %q worker %d")
    :format(package.path, package.cpath, lua, script or arg[0], port))
  local wpid, wport = out:read("*l"):match("^worker (%d+) listening (%d+)$")
  return wpid, tonumber(wport), out
end

-- Connects to port count times from `concurrency` tasks; returns the
-- answers per worker pid.
local function clients(port, count, concurrency)
  local seen, left = {}, count
  for _ = 1, concurrency do
    cosock.spawn(function()
      while left > 0 do
        left = left - 1
        local c = assert(socket.connect("127.0.0.1", port))
        c:settimeout(10)
        c:send("hello\n")
        local who = assert(c:receive("*l")):match("^(%d+) hello$")
        seen[who] = (seen[who] or 0) + 1
        c:close()
      end
    end, "client")
  end
  cosock.run()
  return seen
end

local M = { start_worker = start_worker, clients = clients }

if arg and arg[1] == "worker" then
  worker(tonumber(arg[2]) or 0)
elseif arg and arg[0] and arg[0]:match("many_cores%.lua$") then
  local n = tonumber(arg[1]) or 2
  local workers = {}
  local pid1, port, out1 = start_worker(0)
  workers[1] = { pid = pid1, out = out1 }
  for i = 2, n do
    local p, _, o = start_worker(port)
    workers[i] = { pid = p, out = o }
  end
  print(n .. " workers listening on one port")
  local seen, answered, distinct = clients(port, 40, 4), 0, 0
  for _, k in pairs(seen) do answered = answered + k; distinct = distinct + 1 end
  print(answered .. " connections answered by " .. distinct .. " workers")
  local served = 0
  for _, w in ipairs(workers) do
    os.execute("kill -TERM " .. w.pid)
    served = served + tonumber(w.out:read("*a"):match("served (%d+)") or 0)
    w.out:close()
  end
  print("every worker stopped on SIGTERM; connections served: " .. served)
end

return M
