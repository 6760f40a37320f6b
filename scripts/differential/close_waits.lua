-- A socket closed by another task while a task waits on it, for each kind of
-- socket and call: tcp receive, send (the socket buffer full), accept; udp
-- receive and receivefrom; TLS handshake and receive (when a certificate is
-- given, COSOCK_DIFF_CERTS). Each waiter has a timeout of 0.2 s; the close
-- comes 0.05 s into the wait. cosock leaves the waiter parked until its
-- timeout and returns what a timeout returns; a descriptor number reused by
-- a new socket in the meantime does not wake it. Last, a receive with no
-- timeout: it stays parked while the other tasks go on (the program then
-- ends with os.exit, as nothing can end that wait on cosock).
-- (A TLS wait that times out says "timeout" on cosock 0.2.0 and "wantread"
-- on cosock-native; tls.lua compares that; here both print "timeout".)
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket
local dir = os.getenv("COSOCK_DIFF_CERTS")

-- waiter(label, sock, fn): fn(sock) waits in its own task; another task
-- closes sock 0.05 s later and opens a udp socket (which may take the closed
-- descriptor's number) that becomes readable at once. Returns when the waiter
-- returned.
local function tls_timeout(r, err, ...)
  if err == "wantread" then err = "timeout" end
  return r, err
end

local function case(label, sock, fn, tmo)
  local tx, rx = cosock.channel.new()
  R.task(label, function()
    if tmo == false then sock:settimeout(nil) else sock:settimeout(0.2) end
    R.call(label, fn, sock)
    tx:send(true)
  end)
  R.task(label .. " closer", function()
    socket.sleep(0.05)
    R.call(label .. ": close", function() return (sock:close()) end)
    local u = socket.udp()
    u:setsockname("127.0.0.1", 0)
    local _, port = u:getsockname()
    u:sendto("x", "127.0.0.1", port)              -- readable: must not wake the waiter
    rx:receive()
    u:close()
  end)
  rx:settimeout(5)
end

local function pair()
  local srv, port = R.listen()
  local c = socket.tcp()
  c:settimeout(2)
  assert(c:connect("127.0.0.1", port))
  local s = srv:accept()
  srv:close()
  return c, s
end

local steps = {}

steps[#steps + 1] = function(done)
  local c, s = pair()
  case("tcp receive", c, function(x) return x:receive("*l") end)
  return function() s:close() end
end

steps[#steps + 1] = function()
  local c, s = pair()
  case("tcp receive 10", c, function(x) return x:receive(10) end)
  return function() s:close() end
end

steps[#steps + 1] = function()
  local c, s = pair()
  local big = string.rep("x", 8 * 1024 * 1024)
  case("tcp send", c, function(x)
    local n, err, last = x:send(big)
    return n, err, R.kind(last)
  end)
  return function() s:close() end
end

steps[#steps + 1] = function()
  local srv = R.listen()
  case("tcp accept", srv, function(x) return x:accept() end)
end

steps[#steps + 1] = function()
  local u = socket.udp()
  u:setsockname("127.0.0.1", 0)
  case("udp receive", u, function(x) return x:receive() end)
end

steps[#steps + 1] = function()
  local u = socket.udp()
  u:setsockname("127.0.0.1", 0)
  case("udp receivefrom", u, function(x) return x:receivefrom() end)
end

if dir then
  local ssl = cosock.ssl
  local server_cfg = { mode = "server", protocol = "any", certificate = dir .. "/cert.pem",
                       key = dir .. "/key.pem", verify = "none", options = "all" }
  local client_cfg = { mode = "client", protocol = "any", verify = "none", options = "all" }
  steps[#steps + 1] = function()
    local c, s = pair()
    local w = ssl.wrap(s, server_cfg)
    case("tls dohandshake", w, function(x) return tls_timeout(x:dohandshake()) end)
    return function() c:close() end
  end
  steps[#steps + 1] = function()
    local c, s = pair()
    local ws, wc = ssl.wrap(s, server_cfg), ssl.wrap(c, client_cfg)
    local hs = cosock.spawn(function() ws:settimeout(2); ws:dohandshake() end, "hs")
    wc:settimeout(2)
    assert(wc:dohandshake())
    socket.sleep(0.05)
    case("tls receive", wc, function(x) return tls_timeout(x:receive("*l")) end)
    return function() ws:close() end
  end
end

steps[#steps + 1] = function()
  local c, s = pair()
  case("tcp receive, no timeout", c, function(x) return x:receive("*l") end, false)
  return function() s:close() end
end

R.task("main", function()
  for _, step in ipairs(steps) do
    local after = step()
    socket.sleep(0.4)
    if after then after() end
  end
  print("the receive with no timeout is still waiting")
  os.exit(0)
end)
R.run()
