-- W4 fan-in, cqueues: CLIENTS client coroutines, each REQS line
-- request/responses, against one server that starts a coroutine per
-- accepted connection. The server answers "ok <request>".
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"

local W, IMPL = "w4", "cqueues"
local CLIENTS = B.argnum(1, 100)
local REQS = B.argnum(2, 100)

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local srv = csock.listen{ host = "127.0.0.1", port = 0, backlog = 1024 }
  assert(srv:listen())
  local _, _, port = srv:localname()
  local served, answered, handlers, clients_done = 0, 0, 0, 0

  cq:wrap(function()
    for _ = 1, CLIENTS do
      local c = assert(srv:accept())
      cq:wrap(function()
        handlers = handlers + 1
        while true do
          local line = c:read("*l")
          if line == nil then break end
          served = served + 1
          assert(c:write("ok " .. line .. "\n"))
        end
        c:close()
      end)
    end
    srv:close()
  end)

  for ci = 1, CLIENTS do
    cq:wrap(function()
      local c = assert(csock.connect("127.0.0.1", port))
      for i = 1, REQS do
        local req = ci .. " " .. i
        assert(c:write(req .. "\n"))
        local line = c:read("*l")
        if line ~= "ok " .. req then error("client got " .. tostring(line)) end
        answered = answered + 1
      end
      c:close()
      clients_done = clients_done + 1
    end)
  end

  local t0, c0 = B.now(), B.cpu()
  local ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
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
