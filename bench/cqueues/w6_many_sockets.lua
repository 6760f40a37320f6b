-- W6 many sockets, cqueues: N loopback connections held open at once,
-- ROUNDS line round trips on each.
-- The server accepts all N connections first and only then sends "go\n" on
-- each, so every connection is open at the same moment; a client waits for
-- "go", does its round trips, then closes. Clients connect in batches of 500
-- with one loop step between batches (keeps the listen backlog small).
-- Usage: w6_many_sockets.lua [N] [ROUNDS] [one|split]
--   one:   clients and server in this process (2N sockets here);
--   split: clients in a child process running this same program
--          ("client" role), for when 2N fds exceed the fd limit.
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"

local IMPL = "cqueues"
local N = B.argnum(1, 1500)
local ROUNDS = B.argnum(2, 10)
local MODE = arg[3] or "one"
local W = (N == 1500) and "w6" or ("w6_" .. N)
local BATCH = 500

local function start_clients(cq, port, state)
  cq:wrap(function()
    for ci = 1, N do
      cq:wrap(function()
        local c = assert(csock.connect("127.0.0.1", port))
        c:settimeout(60)
        local go = c:read("*l")
        if go ~= "go" then error("client expected go, got " .. tostring(go)) end
        for i = 1, ROUNDS do
          local req = ci .. " " .. i
          assert(c:write(req .. "\n"))
          local line = c:read("*l")
          if line ~= "ok " .. req then error("client got " .. tostring(line)) end
          state.answered = state.answered + 1
        end
        c:close()
        state.clients_done = state.clients_done + 1
      end)
      if ci % BATCH == 0 then cqueues.sleep(0) end
    end
  end)
end

if MODE == "client" then
  local port = B.argnum(4)
  local state = { answered = 0, clients_done = 0 }
  local c0 = B.cpu()
  local cq = cqueues.new()
  start_clients(cq, port, state)
  local ok, err = cq:loop()
  if not ok then B.fail(W, IMPL, "client: " .. tostring(err)) end
  B.child_report({ { "answered", state.answered }, { "clients", state.clients_done },
                   { "cpu", B.cpu() - c0 }, { "rss_kb", B.rss_kb() } })
  os.exit(0)
end

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local srv = csock.listen{ host = "127.0.0.1", port = 0, backlog = 4096 }
  assert(srv:listen())
  local _, _, port = srv:localname()
  local state = { answered = 0, clients_done = 0 }
  local served, handlers_done, t_first, t_last = 0, 0, nil, nil

  cq:wrap(function()
    local conns = {}
    for i = 1, N do
      local c, err = srv:accept(60)
      if not c then error("accept: " .. tostring(err)) end
      if i == 1 then t_first = B.now() end
      conns[i] = c
    end
    srv:close()
    for i = 1, N do
      local c = conns[i]
      conns[i] = nil
      cq:wrap(function()
        c:settimeout(60)
        assert(c:write("go\n"))
        while true do
          local line = c:read("*l")
          if line == nil then break end
          served = served + 1
          assert(c:write("ok " .. line .. "\n"))
        end
        c:close()
        handlers_done = handlers_done + 1
        if handlers_done == N then t_last = B.now() end
      end)
    end
  end)

  local child
  if MODE == "split" then
    child = B.start_self(N, ROUNDS, "client", port)
  else
    start_clients(cq, port, state)
  end

  local t0, c0 = B.now(), B.cpu()
  local ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
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
