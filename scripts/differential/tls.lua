-- tls wrappers (cosock.ssl.wrap over a tcp wrapper): handshake, send, receive,
-- settimeout, pass-through methods, close; values with count and types. Needs
-- the certificate that scripts/differential.sh makes (COSOCK_DIFF_CERTS).
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local dir = os.getenv("COSOCK_DIFF_CERTS")
if not dir then
  print("no certificate (openssl missing): nothing to compare")
  return
end
local cosock = require "cosock"
local socket, ssl = cosock.socket, cosock.ssl

local server_cfg = { mode = "server", protocol = "any", certificate = dir .. "/cert.pem",
                     key = dir .. "/key.pem", verify = "none", options = "all" }
local client_cfg = { mode = "client", protocol = "any", verify = "none", options = "all" }

local srv, port = R.listen()
cosock.spawn(function()
  local raw = srv:accept()
  local s = ssl.wrap(raw, server_cfg)
  R.show("server wrap", s)
  R.call("server settimeout", s.settimeout, s, 2)
  R.call("server dohandshake", s.dohandshake, s)
  R.call("server receive *l", s.receive, s)
  R.call("server receive 3", s.receive, s, 3)
  R.call("server receive 5", s.receive, s, 5)
  R.call("server send", s.send, s, "reply\n")
  s:settimeout(0)
  R.call("server receive, timeout 0", s.receive, s)
  s:settimeout(0.02)
  R.call("server receive, timeout 0.02", s.receive, s)
  s:settimeout(2)
  R.call("server receive *a", s.receive, s, "*a")
  R.call("server close", s.close, s)
  R.call("server close again", s.close, s)
  srv:close()
end, "server")

cosock.spawn(function()
  local t = socket.tcp()
  t:settimeout(2)
  assert(t:connect("127.0.0.1", port))
  local c = ssl.wrap(t, client_cfg)
  R.show("client wrap", c)
  R.call("client settimeout", c.settimeout, c, 2)
  R.call("client dohandshake", c.dohandshake, c)
  R.call("client dohandshake again", c.dohandshake, c)
  R.call("client send", c.send, c, "hello\nabcdef")
  R.call("client send i j", c.send, c, "0123", 2, 3)
  R.call("client receive", c.receive, c)
  R.call("client dirty", c.dirty, c)
  R.call("client getpeercertificate", function() return type(c:getpeercertificate()) end)
  R.call("client want", c.want, c)
  R.call("client getfd kind", function() return R.kind(c:getfd()) end)
  R.call("client getstats kinds", function()
    local a, b, x = c:getstats()
    return a, b, R.kind(x)
  end)
  socket.sleep(0.05)
  R.call("client close", c.close, c)
  R.call("client close again", c.close, c)
  R.call("client send after close", c.send, c, "x")
end, "client")
R.run("run")

-- a wrap of something that is not a tcp wrapper
R.call("wrap a string", ssl.wrap, "nope", client_cfg)
R.call("wrap a table", ssl.wrap, {}, client_cfg)
R.call("wrap nil", ssl.wrap, nil, client_cfg)

-- the timeout of a tls wrapper made from a tcp wrapper that has one
local t = socket.tcp()
t:settimeout(3)
local w = ssl.wrap(t, client_cfg)
R.show("tls timeout field after wrap", w.timeout)
w:close()
