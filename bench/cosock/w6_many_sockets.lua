-- W6 many sockets, cosock: N loopback connections held open at once,
-- ROUNDS line round trips on each.
-- The server accepts all N connections first and only then sends "go\n" on
-- each, so every connection is open at the same moment; a client waits for
-- "go", does its round trips, then closes. Clients are spawned in batches of
-- 500 with one pass (sleep(0)) between batches (keeps the listen backlog
-- small).
-- Usage: w6_many_sockets.lua [N] [ROUNDS] [one|split]   (default 1500 10 one)
--   one:   clients and server in this process (2N sockets here);
--   split: clients in a child process running this same program
--          ("client" role), for when 2N fds exceed the fd limit.
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local IMPL = "cosock-native"
local N = B.argnum(1, 1500)
local ROUNDS = B.argnum(2, 10)
local MODE = arg[3] or "one"
local W = (N == 1500) and "w6" or ("w6_" .. N)
local BATCH = 500

local function client(ci, port, state)
  local c = assert(socket.connect("127.0.0.1", port))
  c:settimeout(60)
  local go, err = c:receive("*l")
  if go ~= "go" then error("client expected go, got " .. tostring(go or err)) end
  for i = 1, ROUNDS do
    local req = ci .. " " .. i
    assert(c:send(req .. "\n"))
    local line, err2 = c:receive("*l")
    if line ~= "ok " .. req then error("client got " .. tostring(line or err2)) end
    state.answered = state.answered + 1
  end
  c:close()
  state.clients_done = state.clients_done + 1
end

local function start_clients(port, state)
  cosock.spawn(function()
    for ci = 1, N do
      cosock.spawn(function() client(ci, port, state) end, "client")
      if ci % BATCH == 0 then socket.sleep(0) end
    end
  end, "spawner")
end

if MODE == "client" then
  local port = B.argnum(4)
  local state = { answered = 0, clients_done = 0 }
  local c0 = B.cpu()
  B.guard(W, IMPL, function()
    start_clients(port, state)
    cosock.run()
  end)
  B.child_report({ { "answered", state.answered }, { "clients", state.clients_done },
                   { "cpu", B.cpu() - c0 }, { "rss_kb", B.rss_kb() } })
  os.exit(0)
end

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 4096))
  local _, port = server:getsockname()
  port = tonumber(port)
  local state = { answered = 0, clients_done = 0 }
  local served, handlers_done, t_first, t_last = 0, 0, nil, nil

  local function handle(c)
    c:settimeout(60)
    assert(c:send("go\n"))
    while true do
      local line, err = c:receive("*l")
      if line == nil then
        if err ~= "closed" then error("server receive: " .. tostring(err)) end
        break
      end
      served = served + 1
      assert(c:send("ok " .. line .. "\n"))
    end
    c:close()
    handlers_done = handlers_done + 1
    if handlers_done == N then t_last = B.now() end
  end

  cosock.spawn(function()
    server:settimeout(60)
    local conns = {}
    for i = 1, N do
      local c, err = server:accept()
      if not c then error("accept: " .. tostring(err)) end
      if i == 1 then t_first = B.now() end
      conns[i] = c
    end
    server:close()
    for i = 1, N do
      local c = conns[i]
      conns[i] = nil
      cosock.spawn(function() handle(c) end, "handler")
    end
  end, "acceptor")

  local child
  if MODE == "split" then
    child = B.start_self(N, ROUNDS, "client", port)
  else
    start_clients(port, state)
  end

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local rss = B.rss_kb()
  if child then
    local rep, out = B.finish_child(child)
    if not rep then B.fail(W, IMPL, "client process: " .. tostring(out)) end
    state.answered, state.clients_done = rep.answered, rep.clients
    cpu = cpu + rep.cpu
  end
  local want = N * ROUNDS
  if served ~= want or state.answered ~= want or handlers_done ~= N or state.clients_done ~= N then
    B.fail(W, IMPL, ("served=%d answered=%d handlers=%d clients=%d want %d/%d")
      :format(served, state.answered, handlers_done, state.clients_done, want, N))
  end
  B.result(W, IMPL, {
    { "ops", want }, { "conns", N }, { "mode", MODE }, { "wall", wall }, { "cpu", cpu },
    { "rss_kb", rss }, { "rate", want / (t_last - t_first) },
  })
end)
