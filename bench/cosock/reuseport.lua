-- reuseport, cosock-native: N worker processes of examples/many_cores.lua
-- share a listening port with SO_REUSEPORT, each with its own loop; this
-- process connects CONNS times from C client tasks (connect, one line each
-- way, close) and reports connections per second. On a machine with few
-- cores the clients take one of them: the figure is what N workers give
-- beside one client process, not a scaling law.
-- Usage: reuseport.lua N [CONNS] [C]   (defaults 2, 20000, 50)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"

local N, CONNS, C = B.argnum(1, 2), B.argnum(2, 20000), B.argnum(3, 50)
local W, IMPL = "reuseport" .. N, "cosock-native"
local example = (arg[0]:match("^(.*/)") or "./") .. "../../examples/many_cores.lua"

B.guard(W, IMPL, function()
  local M = dofile(example)                      -- (its launcher runs only as the main script)
  local workers, port = {}, 0
  for i = 1, N do
    local pid, p, out = M.start_worker(port, example)
    assert(pid, "worker " .. i .. " did not start")
    port = p
    workers[i] = { pid = pid, out = out }
  end
  local t0, c0 = B.now(), B.cpu()
  local seen = M.clients(port, CONNS, C)
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local answered, distinct = 0, 0
  for _, k in pairs(seen) do answered = answered + k; distinct = distinct + 1 end
  for _, w in ipairs(workers) do
    os.execute("kill -TERM " .. w.pid)
    w.out:read("*a")
    w.out:close()
  end
  assert(answered == CONNS, "answered " .. answered .. " of " .. CONNS)
  B.result(W, IMPL, {
    { "ops", CONNS }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", CONNS / wall }, { "workers_seen", distinct },
  })
end)
