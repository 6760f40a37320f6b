-- W1 ping-pong, cqueues: one server coroutine and one client coroutine on
-- one loopback TCP connection, "ping\n" / "pong\n" read line by line.
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"

local W, IMPL = "w1", "cqueues"
local ROUNDS = B.argnum(1, 20000)

B.guard(W, IMPL, function()
  local cq = cqueues.new()
  local srv = csock.listen("127.0.0.1", 0)
  assert(srv:listen())
  local _, _, port = srv:localname()
  local served, answered, t_first, t_last = 0, 0, nil, nil

  cq:wrap(function()
    local c = assert(srv:accept())
    while true do
      local line = c:read("*l")
      if line == nil then break end
      if line ~= "ping" then error("server got " .. tostring(line)) end
      served = served + 1
      assert(c:write("pong\n"))
    end
    c:close()
    srv:close()
  end)

  cq:wrap(function()
    local c = assert(csock.connect("127.0.0.1", port))
    t_first = B.now()
    for _ = 1, ROUNDS do
      assert(c:write("ping\n"))
      local line = c:read("*l")
      if line ~= "pong" then error("client got " .. tostring(line)) end
      answered = answered + 1
    end
    t_last = B.now()
    c:close()
  end)

  local t0, c0 = B.now(), B.cpu()
  local ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
  if served ~= ROUNDS or answered ~= ROUNDS then
    B.fail(W, IMPL, ("served=%d answered=%d want %d"):format(served, answered, ROUNDS))
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", ROUNDS / (t_last - t_first) },
  })
end)
