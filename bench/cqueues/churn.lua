-- Churn, cqueues: connections made and closed as fast as they go. CLIENTS
-- client coroutines each make connections in turn until CONNS were made in
-- all: connect, one line request, one line reply, close. The server starts a
-- coroutine per accepted connection that reads the request, answers
-- "ok <request>" and closes.
-- Usage: churn.lua [CONNS] [CLIENTS]   (default 10000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"

local W, IMPL = "churn", "cqueues"
local CONNS = B.argnum(1, 10000)
local CLIENTS = B.argnum(2, 100)

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local srv = csock.listen{ host = "127.0.0.1", port = 0, backlog = 1024 }
  assert(srv:listen())
  local _, _, port = srv:localname()
  local served, answered, started = 0, 0, 0

  cq:wrap(function()
    for _ = 1, CONNS do
      local c = assert(srv:accept())
      cq:wrap(function()
        local line = c:read("*l")
        if line == nil then error("server read failed") end
        assert(c:write("ok " .. line .. "\n"))
        served = served + 1
        c:close()
      end)
    end
    srv:close()
  end)

  for ci = 1, CLIENTS do
    cq:wrap(function()
      while started < CONNS do
        started = started + 1
        local req = ci .. " " .. started
        local c = assert(csock.connect("127.0.0.1", port))
        assert(c:write(req .. "\n"))
        local line = c:read("*l")
        if line ~= "ok " .. req then error("client got " .. tostring(line)) end
        answered = answered + 1
        c:close()
      end
    end)
  end

  local t0, c0 = B.now(), B.cpu()
  local ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
  B.exchange_done(W, IMPL, CONNS, served, answered, wall, cpu)
end)
