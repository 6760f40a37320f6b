-- Per-connection memory, cosock-native (bench/footprint): N loopback
-- connections held open, a task on each end parked in receive("*l"), as a
-- server and its clients hold them between requests. Prints the resident
-- memory (VmRSS) and the Lua heap the N connections added, per connection,
-- and where the heap goes (one end's share, in bytes):
--   ls_obj   LuaSocket's tcp object, its 8 KiB buffer inside (a full userdata)
--   wrapper  cosock's wrapper table around it
--   task     the rest: the task (coroutine, its stack, its slot, the
--            handle), the wait, the loop's per-fd state
-- Usage: conn_hold.lua [N] [one|split]   (default 1500 one)
--   one:   both ends in this process (2N fds);
--   split: the clients in a child process running this program ("client"
--          role), whose own growth is added (when 2N fds exceed the limit).
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local luasocket = require "socket"
local socket = cosock.socket

local IMPL = "cosock-native"
local N = B.argnum(1, 1500)
local MODE = arg[2] or "one"
local W = "conn_" .. N
local BATCH = 500

-- The clients: connect, wait for the server's "bye", answer it and close.
local function clients(port, state)
  cosock.spawn(function()
    for i = 1, N do
      cosock.spawn(function()
        local c = assert(socket.connect("127.0.0.1", port))
        state.connected = state.connected + 1
        local line = c:receive("*l")
        if line ~= "bye" then state.bad = (state.bad or 0) + 1 end
        c:send("bye\n")
        c:close()
      end, "client")
      if i % BATCH == 0 then socket.sleep(0) end
    end
  end, "spawner")
end

-- Waits (in a task) until n of state's count are there, then one more pass:
-- every task has parked.
local function settle(state, key, n)
  while state[key] < n do socket.sleep(0) end
  socket.sleep(0)
end

if MODE == "client" then
  local port = B.argnum(3)
  local state = { connected = 0 }
  local rss0, heap0 = B.rss_now(), B.heap_now()
  clients(port, state)
  cosock.spawn(function()
    settle(state, "connected", N)
    local heap1 = B.heap_now()
    B.child_report({ { "rss", B.rss_now() - rss0 }, { "heap", heap1 - heap0 } })
  end, "measure")
  cosock.run()
  os.exit(0)
end

-- One end's parts, in the Lua heap: K LuaSocket objects, then K wrappers.
local function parts(k)
  local h0 = B.heap_now()
  local raw = {}
  for i = 1, k do raw[i] = luasocket.tcp() end
  local h1 = B.heap_now()
  for i = 1, k do raw[i]:close() end
  raw = nil
  h1 = h1 - B.heap_now()
  local wrapped = {}
  local h2 = B.heap_now()
  for i = 1, k do wrapped[i] = socket.tcp() end
  local h3 = B.heap_now()
  for i = 1, k do wrapped[i]:close() end
  return h1 / k, (h3 - h2) / k - h1 / k
end

B.guard(W, IMPL, function()
  local ls_obj, wrapper = parts(math.min(N, 1000))
  local rss0, heap0 = B.rss_now(), B.heap_now()
  local server = assert(socket.bind("127.0.0.1", 0, 4096))
  local _, port = server:getsockname()
  port = tonumber(port)
  local state = { connected = 0, accepted = 0 }
  local conns = {}
  cosock.spawn(function()
    for i = 1, N do
      local c = assert(server:accept())
      conns[i] = c
      state.accepted = state.accepted + 1
      cosock.spawn(function()
        local line = c:receive("*l")             -- the client's answer to bye
        if line ~= "bye" then state.bad = (state.bad or 0) + 1 end
        c:close()
      end, "handler")
    end
  end, "acceptor")
  local child
  if MODE == "split" then child = B.start_self(N, "client", port)
  else clients(port, state) end
  local rss, heap
  cosock.spawn(function()
    settle(state, "accepted", N)
    if MODE ~= "split" then settle(state, "connected", N) end
    server:close()
    heap = B.heap_now()
    rss = B.rss_now()
    for i = 1, N do assert(conns[i]:send("bye\n")) end
  end, "measure")
  cosock.run()
  local crss, cheap = 0, 0
  if child then
    local rep, out = B.finish_child(child)
    if not rep then B.fail(W, IMPL, "client process: " .. tostring(out)) end
    crss, cheap = rep.rss, rep.heap
  end
  if state.bad then B.fail(W, IMPL, state.bad .. " tasks did not get bye") end
  local per_conn_heap = (heap - heap0 + cheap) / N
  B.result(W, IMPL, {
    { "conns", N }, { "mode", MODE },
    { "rss_per_conn", (rss - rss0 + crss) / N }, { "heap_per_conn", per_conn_heap },
    { "ls_obj", ls_obj }, { "wrapper", wrapper }, { "task", per_conn_heap / 2 - ls_obj - wrapper },
  })
end)
