-- Per-connection memory, cqueues (bench/footprint): N loopback connections
-- held open, a coroutine on each end waiting in read("*l"), as
-- bench/cosock/conn_hold.lua holds them. Prints the resident memory (VmRSS)
-- and the Lua heap the N connections added, per connection.
-- Usage: conn_hold.lua [N] [one|split]   (default 1500 one)
--   one:   both ends in this process (2N fds);
--   split: the clients in a child process running this program ("client"
--          role), whose own growth is added (when 2N fds exceed the limit).
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"

local IMPL = "cqueues"
local N = B.argnum(1, 1500)
local MODE = arg[2] or "one"
local W = "conn_" .. N
local BATCH = 500

-- The clients: connect, wait for the server's "bye", answer it and close.
local function clients(cq, port, state)
  cq:wrap(function()
    for i = 1, N do
      cq:wrap(function()
        local c = assert(csock.connect("127.0.0.1", port))
        assert(c:connect(60))
        state.connected = state.connected + 1
        local line = c:read("*l")
        if line ~= "bye" then state.bad = (state.bad or 0) + 1 end
        c:write("bye\n")
        c:close()
      end)
      if i % BATCH == 0 then cqueues.sleep(0) end
    end
  end)
end

-- Waits (in a coroutine) until n of state's count are there, then one more
-- step: every coroutine is waiting.
local function settle(state, key, n)
  while state[key] < n do cqueues.sleep(0) end
  cqueues.sleep(0)
end

if MODE == "client" then
  local port = B.argnum(3)
  local state = { connected = 0 }
  local rss0, heap0 = B.rss_now(), B.heap_now()
  local cq = cqueues.new()
  clients(cq, port, state)
  cq:wrap(function()
    settle(state, "connected", N)
    local heap1 = B.heap_now()
    B.child_report({ { "rss", B.rss_now() - rss0 }, { "heap", heap1 - heap0 } })
  end)
  assert(cq:loop())
  os.exit(0)
end

B.guard(W, IMPL, function()
  local rss0, heap0 = B.rss_now(), B.heap_now()
  local cq = cqueues.new()
  local srv = csock.listen{ host = "127.0.0.1", port = 0, backlog = 4096 }
  assert(srv:listen())
  local _, _, port = srv:localname()
  local state = { connected = 0, accepted = 0 }
  local conns = {}
  cq:wrap(function()
    for i = 1, N do
      local c = assert(srv:accept(60))
      conns[i] = c
      state.accepted = state.accepted + 1
      cq:wrap(function()
        local line = c:read("*l")                -- the client's answer to bye
        if line ~= "bye" then state.bad = (state.bad or 0) + 1 end
        c:close()
      end)
    end
  end)
  local child
  if MODE == "split" then child = B.start_self(N, "client", port)
  else clients(cq, port, state) end
  local rss, heap
  cq:wrap(function()
    settle(state, "accepted", N)
    if MODE ~= "split" then settle(state, "connected", N) end
    srv:close()
    heap = B.heap_now()
    rss = B.rss_now()
    for i = 1, N do assert(conns[i]:write("bye\n")) end
  end)
  local ok, err = cq:loop()
  if not ok then B.fail(W, IMPL, err) end
  local crss, cheap = 0, 0
  if child then
    local rep, out = B.finish_child(child)
    if not rep then B.fail(W, IMPL, "client process: " .. tostring(out)) end
    crss, cheap = rep.rss, rep.heap
  end
  if state.bad then B.fail(W, IMPL, state.bad .. " coroutines did not get bye") end
  B.result(W, IMPL, {
    { "conns", N }, { "mode", MODE },
    { "rss_per_conn", (rss - rss0 + crss) / N }, { "heap_per_conn", (heap - heap0 + cheap) / N },
  })
end)
