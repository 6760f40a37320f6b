-- asyncify_https: LuaSec's ssl.https loaded with cosock.asyncify "ssl.https",
-- as community drivers call it (e.g. a SmartThings REST client posting
-- commands from a driver: https.request with a table of url, method,
-- headers, source and sink). ssl.https reaches into the socket it is given:
-- getmetatable(sock).__index.settimeout, then, after ssl.wrap, every method of
-- the TLS wrapper's metatable, copied onto its own connection object. The
-- server wraps each connection with cosock.ssl in server mode, with a
-- certificate made at run time. Requests: the string form (GET), the table
-- form (POST with a source and a sink), a chunked reply written in pieces, a
-- client that verifies the server against the certificate (cafile), one that
-- verifies against no authority (the handshake fails), and a server that
-- accepts and then says nothing until https.TIMEOUT (set by the program, as
-- drivers do) runs out in the handshake.
-- needs:
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
local cosock = require "cosock"
local socket = require "cosock.socket"
local ssl = require "cosock.ssl"
local ltn12 = require "ltn12"
local https = cosock.asyncify "ssl.https"
https.TIMEOUT = 2

local tmp = os.tmpname()
local tls = H.make_cert(tmp .. ".d")
local srv, port = H.listen()
local base = "https://127.0.0.1:" .. port
local done = false

local function serve(c, n)
  local req = H.read_request(c)
  H.say("server " .. n .. ": " .. tostring(req.line), req.body and ("body " .. req.body) or "")
  local path = req.line and req.line:match("^%S+ (%S+)")
  if path == "/chunked" then
    local parts = { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      "5\r\nhello", "\r\n7\r\n, there\r\n", "0\r\n\r\n" }
    for _, p in ipairs(parts) do assert(c:send(p)); socket.sleep(0.02) end
  else
    local body = "you asked for " .. tostring(path)
    assert(c:send(string.format("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
      #body, body)))
  end
end

H.task("server", function()
  srv:settimeout(5)
  for n = 1, 6 do
    local c = assert(srv:accept())
    c:settimeout(3)
    if n == 6 then
      -- Says nothing: the client's handshake waits until https.TIMEOUT.
      socket.sleep(2.5)
      c:close()
    else
      local s = assert(ssl.wrap(c, { mode = "server", protocol = "any", key = tls.key,
        certificate = tls.certificate }))
      local ok, err = s:dohandshake()
      if ok then serve(s, n) else H.say("server " .. n .. ": handshake", err) end
      s:close()
    end
  end
  done = true
end)

H.task("client", function()
  H.say("string form", https.request(base .. "/status"))
  local got = {}
  local r, code, headers, status = https.request {
    url = base .. "/devices/1/commands", method = "POST",
    headers = { ["content-type"] = "application/json", ["content-length"] = 12 },
    source = ltn12.source.string('{"cmd":"on"}'), sink = ltn12.sink.table(got),
  }
  H.say("table form", r, code, status, headers and headers["content-length"], table.concat(got))
  got = {}
  r, code = https.request { url = base .. "/chunked", sink = ltn12.sink.table(got) }
  H.say("chunked", r, code, table.concat(got))
  H.say("verified", https.request { url = base .. "/verified", verify = "peer", cafile = tls.certificate,
    sink = ltn12.sink.table({}) })
  local r2, err = https.request { url = base .. "/unverified", verify = "peer", sink = ltn12.sink.table({}) }
  H.say("no authority", r2, err and err:match("certificate verify failed") or err)
  local r3, err3 = https.request(base .. "/silent")
  H.say("silent server", r3, err3)
  while not done do socket.sleep(0.05) end
  os.execute("rm -rf '" .. tmp .. "' '" .. tmp .. ".d'")
end)
H.run()
