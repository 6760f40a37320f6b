-- cosock.socket.http (LuaSocket's socket.http through asyncify) and
-- cosock.ssl.https against tiny HTTP servers that the specs run as tasks on
-- 127.0.0.1. No outside network.

local cosock = require "cosock"
local ltn12 = require "ltn12"
local net = require "spec.support.net"
local certs_mod = require "spec.support.certs"

local socket = cosock.socket

-- Read one request from `c` (a cosock tcp or tls wrapper): request line, headers
-- (lower-cased names) and a body of content-length bytes.
local function read_request(c)
  local req = { headers = {} }
  req.line = assert(c:receive())
  while true do
    local l = assert(c:receive())
    if l == "" then break end
    local k, v = l:match("^([^:]+):%s*(.*)$")
    req.headers[k:lower()] = v
  end
  local len = tonumber(req.headers["content-length"])
  if len and len > 0 then req.body = assert(c:receive(len)) end
  return req
end

-- Serve `n` requests on `srv`, one task per connection; `respond(req)` returns the
-- raw response text. `wrap(conn)` may turn the connection into TLS first.
local function serve(srv, n, respond, wrap)
  cosock.spawn(function()
    for _ = 1, n do
      local c = assert(srv:accept())
      c:settimeout(net.TIMEOUT)
      cosock.spawn(function()
        if wrap then c = wrap(c) end
        local req = read_request(c)
        local resp = respond(req)
        -- In small pieces, so the client has to wait: 7 bytes, or for a big
        -- response 100 pieces (100,000 bytes in 7-byte pieces took 14,000
        -- passes: under valgrind the next accept timed out meanwhile).
        local size = math.max(7, math.ceil(#resp / 100))
        for i = 1, #resp, size do
          assert(c:send(resp:sub(i, i + size - 1)))
          socket.sleep(0)
        end
        c:close()
      end, "http conn")
    end
    srv:close()
  end, "http server")
end

describe("cosock.socket.http", function()
  local http

  before_each(function()
    cosock.reset()
    http = socket.http
    http.TIMEOUT = net.TIMEOUT
  end)
  after_each(function() net.check_clean() end)

  it("GET with a content-length body", function()
    local r, seen = {}, nil
    cosock.spawn(function()
      local srv, port = net.listen()
      serve(srv, 1, function(req)
        seen = req
        return "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-Test: yes\r\n\r\nhello world"
      end)
      r.body, r.code, r.headers, r.status = http.request("http://127.0.0.1:" .. port .. "/path?q=1")
    end, "client")
    net.run()
    assert.equal("GET /path?q=1 HTTP/1.1", seen.line)
    assert.equal("hello world", r.body)
    assert.equal(200, r.code)
    assert.equal("yes", r.headers["x-test"])
    assert.equal("HTTP/1.1 200 OK", r.status)
  end)

  it("POST with a body, and a chunked response", function()
    local r, seen = {}, nil
    cosock.spawn(function()
      local srv, port = net.listen()
      serve(srv, 1, function(req)
        seen = req
        return "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
          .. "5\r\nfirst\r\n7\r\n second\r\n0\r\n\r\n"
      end)
      local out = {}
      r.ok, r.code = http.request {
        url = "http://127.0.0.1:" .. port .. "/submit",
        method = "POST",
        source = ltn12.source.string("payload=1"),
        headers = { ["content-length"] = 9, ["content-type"] = "text/plain" },
        sink = ltn12.sink.table(out),
      }
      r.body = table.concat(out)
    end, "client")
    net.run()
    assert.equal("POST /submit HTTP/1.1", seen.line)
    assert.equal("payload=1", seen.body)
    assert.equal(1, r.ok)
    assert.equal(201, r.code)
    assert.equal("first second", r.body)
  end)

  it("a body delimited by the server closing the connection, and a 404", function()
    local r = {}
    cosock.spawn(function()
      local srv, port = net.listen()
      local big = net.pattern(100000)
      serve(srv, 2, function(req)
        if req.line:find("/missing", 1, true) then
          return "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope"
        end
        return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" .. big
      end)
      r.big = big
      r.body = http.request("http://127.0.0.1:" .. port .. "/big")
      r.nf_body, r.nf_code = http.request("http://127.0.0.1:" .. port .. "/missing")
    end, "client")
    net.run()
    assert.is_true(r.body == r.big)
    assert.equal("nope", r.nf_body)
    assert.equal(404, r.nf_code)
  end)

  it("connection refused comes back as nil, 'connection refused' (LuaSocket's protect)", function()
    local r
    cosock.spawn(function()
      r = net.pack(http.request("http://127.0.0.1:" .. net.dead_port() .. "/"))
    end, "client")
    net.run()
    assert.same({ n = 2, nil, "connection refused" }, r)
  end)

  it("several requests run concurrently", function()
    local N, got = 10, {}
    cosock.spawn(function()
      local srv, port = net.listen(N)
      serve(srv, N, function(req)
        local id = req.line:match("/(%d+)")
        return "HTTP/1.1 200 OK\r\nContent-Length: " .. #id .. "\r\n\r\n" .. id
      end)
      for i = 1, N do
        cosock.spawn(function()
          got[i] = http.request("http://127.0.0.1:" .. port .. "/" .. i)
        end, "client " .. i)
      end
    end, "clients")
    net.run()
    for i = 1, N do assert.equal(tostring(i), got[i]) end
  end)
end)

describe("cosock.ssl.https #luasec", function()
  local certs

  setup(function() certs = certs_mod.generate() end)
  teardown(function() certs.cleanup() end)
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("is LuaSec's ssl.https through asyncify and fetches over TLS from a local server", function()
    local https = cosock.ssl.https
    assert.is_true(rawequal(https, require "cosock.ssl.https"))
    assert.is_false(rawequal(https, require "ssl.https"))
    https.TIMEOUT = net.TIMEOUT
    local r, seen = {}, nil
    cosock.spawn(function()
      local srv, port = net.listen()
      serve(srv, 1, function(req)
        seen = req
        return "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret"
      end, function(c)
        local s = assert(cosock.ssl.wrap(c, certs.server_config()))
        s:settimeout(net.TIMEOUT)
        assert(s:dohandshake())
        return s
      end)
      local out = {}
      r.ok, r.code = https.request {
        url = "https://127.0.0.1:" .. port .. "/tls",
        sink = ltn12.sink.table(out),
        cafile = certs.cafile,
        verify = "peer",
      }
      r.body = table.concat(out)
    end, "client")
    net.run()
    assert.equal("GET /tls HTTP/1.1", seen.line)
    assert.equal(1, r.ok)
    assert.equal(200, r.code)
    assert.equal("secret", r.body)
  end)
end)
