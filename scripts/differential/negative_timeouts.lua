-- settimeout(-1) and settimeout(0) on tcp, udp and tls wrappers and on channel
-- receivers: a call that must wait returns at once with the timeout values.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

cosock.spawn(function()
  local srv = socket.tcp()
  assert(srv:bind("127.0.0.1", 0))
  assert(srv:listen())
  local _, port = srv:getsockname()
  for _, t in ipairs { -1, -0.5, 0 } do
    srv:settimeout(t)
    R.call("accept, timeout " .. t, srv.accept, srv)
  end
  srv:settimeout(2)
  local c = socket.tcp()
  c:settimeout(2)
  assert(c:connect("127.0.0.1", port))
  local s = srv:accept()
  for _, t in ipairs { -1, -0.5, 0 } do
    s:settimeout(t)
    R.call("tcp receive *l, timeout " .. t, s.receive, s)
    R.call("tcp receive 4, timeout " .. t, s.receive, s, 4)
    R.call("tcp receive *a, timeout " .. t, s.receive, s, "*a")
  end
  -- (no partial data before these timeouts: cosock 0.2.0 returns it twice, a
  -- documented defect with its own spec in spec/regress/)
  c:send("def\n")
  socket.sleep(0.01)
  s:settimeout(-1)
  R.call("tcp receive buffered line, timeout -1", s.receive, s)
  c:close(); s:close(); srv:close()

  local u = socket.udp()
  assert(u:setsockname("127.0.0.1", 0))
  for _, t in ipairs { -1, -0.5, 0 } do
    u:settimeout(t)
    R.call("udp receive, timeout " .. t, u.receive, u)
    R.call("udp receivefrom, timeout " .. t, u.receivefrom, u)
  end
  u:close()

  local _, rx = cosock.channel.new()
  for _, t in ipairs { -1, -0.5, 0 } do
    rx:settimeout(t)
    R.call("channel receive, timeout " .. t, rx.receive, rx)
  end
  print("done")
end, "negative")
R.run("run")

-- tls
local dir = os.getenv("COSOCK_DIFF_CERTS")
if not dir then return end
local ssl = cosock.ssl
local srv, port = R.listen()
cosock.spawn(function()
  local raw = srv:accept()
  local s = ssl.wrap(raw, { mode = "server", protocol = "any", certificate = dir .. "/cert.pem",
                            key = dir .. "/key.pem", verify = "none", options = "all" })
  s:settimeout(2)
  assert(s:dohandshake())
  for _, t in ipairs { -1, -0.5, 0 } do
    s:settimeout(t)
    R.call("tls receive, timeout " .. t, s.receive, s)
    R.call("tls receive 3, timeout " .. t, s.receive, s, 3)
  end
  s:settimeout(2)
  R.call("tls receive after", s.receive, s)
  s:close()
  srv:close()
end, "tls-server")
cosock.spawn(function()
  local t = socket.tcp()
  t:settimeout(2)
  assert(t:connect("127.0.0.1", port))
  local c = ssl.wrap(t, { mode = "client", protocol = "any", verify = "none", options = "all" })
  c:settimeout(2)
  assert(c:dohandshake())
  socket.sleep(0.1)
  c:send("end\n")
  socket.sleep(0.05)
  c:close()
end, "tls-client")
R.run("run tls")
