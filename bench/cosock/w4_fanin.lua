-- W4 fan-in, cosock: CLIENTS client tasks, each REQS line request/responses,
-- against one server task that spawns a task per accepted connection. The
-- server answers "ok <request>".
-- Usage: w4_fanin.lua [CLIENTS] [REQS]   (default 100 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local W, IMPL = "w4", "cosock-native"
local CLIENTS = B.argnum(1, 100)
local REQS = B.argnum(2, 100)

B.guard(W, IMPL, function()
  local server = assert(socket.bind("127.0.0.1", 0, 1024))
  local _, port = server:getsockname()
  port = tonumber(port)
  local served, answered, handlers, clients_done = 0, 0, 0, 0

  local function handle(c)
    handlers = handlers + 1
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
  end

  cosock.spawn(function()
    for _ = 1, CLIENTS do
      local c = assert(server:accept())
      cosock.spawn(function() handle(c) end, "handler")
    end
    server:close()
  end, "acceptor")

  for ci = 1, CLIENTS do
    cosock.spawn(function()
      local c = assert(socket.connect("127.0.0.1", port))
      for i = 1, REQS do
        local req = ci .. " " .. i
        assert(c:send(req .. "\n"))
        local line, err = c:receive("*l")
        if line ~= "ok " .. req then error("client got " .. tostring(line or err)) end
        answered = answered + 1
      end
      c:close()
      clients_done = clients_done + 1
    end, "client")
  end

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local want = CLIENTS * REQS
  if served ~= want or answered ~= want or handlers ~= CLIENTS or clients_done ~= CLIENTS then
    B.fail(W, IMPL, ("served=%d answered=%d handlers=%d clients=%d want %d/%d")
      :format(served, answered, handlers, clients_done, want, CLIENTS))
  end
  B.result(W, IMPL, {
    { "ops", want }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", want / wall },
  })
end)
