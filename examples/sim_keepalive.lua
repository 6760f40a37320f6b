-- sim_keepalive: a keep-alive client tested over two simulated hours in a
-- few milliseconds (cosock.sim, doc/simulation.md). The client pings every
-- 60 s and declares the link dead after a 5 s silence; the test cuts the
-- connection once and makes the server a black hole for ten minutes, then
-- asserts on the record.
--   ./scripts/run-example.sh sim_keepalive
local cosock = require "cosock"
local sim = require "cosock.sim"
local socket = cosock.socket

sim.on({ seed = 1 })
sim.host("server.lan", "10.0.0.9")
sim.link("10.0.0.1", "10.0.0.9", { latency = 0.04, bandwidth = 10000 })

local stop_at = sim.now() + 2 * 3600

-- The server: answers "ping" with "pong" on every connection, for two hours.
cosock.spawn(function()
  local srv = assert(socket.bind("10.0.0.9", 7000))
  srv:settimeout(60)
  while sim.now() < stop_at do
    local c = srv:accept()
    if c then
      cosock.spawn(function()
        c:settimeout(300)
        while c:receive() == "ping" do c:send("pong\n") end
        c:close()
      end, "server connection")
    end
  end
  srv:close()
end, "server")

-- The test's faults: a reset at 30 minutes, a black hole from 60 to 70.
cosock.spawn(function()
  socket.sleep(30 * 60)
  sim.cut("10.0.0.9")
  socket.sleep(30 * 60)
  sim.blackhole("10.0.0.9")
  socket.sleep(10 * 60)
  sim.blackhole("10.0.0.9", false)
end, "faults")

-- The client under test.
local ended = 0
cosock.spawn(function()
  while sim.now() < stop_at do
    local c = socket.tcp()
    c:settimeout(5)
    if c:connect("server.lan", 7000) then
      while sim.now() < stop_at and c:send("ping\n") and c:receive() == "pong" do
        socket.sleep(60)
      end
      ended = ended + 1
    end
    c:close()
    socket.sleep(10)
  end
end, "client")

cosock.run()

local connects, timeouts = 0, 0
for _, e in ipairs(sim.record()) do
  if e.event == "connected" then connects = connects + 1 end
  if e.event == "timeout" and e.op then timeouts = timeouts + 1 end
end
print(("simulated %.0f s"):format(sim.now()))
print(("connections ended: %d, connections made: %d, timed-out socket calls: %d"):format(
  ended, connects, timeouts))
print(sim.transcript({ reset = true, blackhole = true }))
sim.off()
