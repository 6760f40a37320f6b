-- cosock.copas (doc/copas.md): what copas 4.11's API promises, case by case:
-- copas's timeouts (per operation, the whole call, 0 as "none"), close,
-- names, error handlers and their argument checks, removethread, exit and
-- waitforexit, TLS through copas.handler, copas.http against a local server.
-- Every wait is a few hundredths of a second at most.

local cosock = require "cosock"
local socket = require "socket"

local function fresh()
  for k in pairs(package.loaded) do
    if k == "cosock.copas" or k:find("^cosock%.copas%.") then package.loaded[k] = nil end
  end
  return require "cosock.copas"
end

local function listener()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  return s, port
end

describe("cosock.copas API", function()
  local copas
  before_each(function()
    cosock.reset()
    copas = fresh()
  end)
  after_each(function() cosock.reset() end)

  describe("settimeouts", function()
    it("checks its arguments as copas does", function()
      local s = socket.tcp()
      assert.are.same({ nil, "connect timeout must be 'nil' or a number" }, { copas.settimeouts(s, "x") })
      assert.are.same({ nil, "send timeout must be 'nil' or a number" }, { copas.settimeouts(s, nil, {}) })
      assert.are.same({ nil, "read timeout must be 'nil' or a number" }, { copas.settimeouts(s, nil, nil, true) })
      assert.are.same({ nil, "timeout must be 'nil' or a number" }, { copas.settimeout(s, "1") })
      assert.is_true(copas.settimeouts(s, 1, nil, -1))
      s:close()
    end)

    it("limits the whole receive, not each wait", function()
      -- 20 bytes 5 ms apart, then silence (the connection stays open): each
      -- wait is shorter than the 20 ms timeout, the whole call is not, so the
      -- call times out before the last byte (a per-wait limit would read all
      -- 20 and then time out)
      local server, port = listener()
      local r
      copas.addserver(server, function(skt)
        copas.removeserver(server)
        for _ = 1, 20 do
          copas.send(skt, "x")
          copas.pause(0.005)
        end
        copas.pauseforever()
      end)
      copas.addthread(function()
        local c = copas.wrap(socket.tcp())
        assert(c:connect("127.0.0.1", port))
        c:settimeouts(nil, nil, 0.02)
        r = { c:receive(30) }
        c:close()
      end)
      copas.loop()
      assert.are.equal(nil, r[1])
      assert.are.equal("timeout", r[2])
      assert.is_true(#r[3] < 20)
    end)

    it("reads 0 as no limit, and a wrapped socket's receive then returns what came", function()
      local server, port = listener()
      local r
      copas.addserver(server, function(skt)
        copas.removeserver(server)
        copas.send(skt, "abc")
        copas.pauseforever() -- (never closes: the receive ends with the data alone)
      end)
      copas.addthread(function()
        local c = copas.wrap(socket.tcp())
        assert(c:connect("127.0.0.1", port))
        c:settimeout(0)
        r = { c:receive("*a") }
        c:close()
      end)
      copas.loop()
      assert.are.equal(nil, r[1])
      assert.are.equal("abc", r[3])
    end)

    it("gives the socket's own error on a timeout after useSocketTimeoutErrors(true)", function()
      local u = assert(socket.udp())
      assert(u:setsockname("127.0.0.1", 0))
      local plain, own
      copas.addthread(function()
        copas.settimeout(u, 0.005)
        plain = { copas.receivefrom(u) }
        copas.useSocketTimeoutErrors(true)
        own = { copas.receivefrom(u) }
      end)
      copas.loop()
      u:close()
      assert.are.same({ nil, "timeout" }, plain)
      assert.are.same({ nil, "timeout" }, own) -- (LuaSocket's own word for udp)
    end)
  end)

  it("wakes a thread waiting on a socket another thread closes", function()
    local server, port = listener()
    local r
    -- the server never answers nor closes; the client's 1 s timeout only
    -- guards against a close that does not wake (then "timeout")
    copas.addserver(server, function() copas.removeserver(server); copas.pauseforever() end)
    copas.addthread(function()
      local c = copas.wrap(socket.tcp())
      assert(c:connect("127.0.0.1", port))
      c:settimeout(1)
      copas.addthread(function() copas.pause(0.002); c:close() end)
      r = { c:receive() }
    end)
    copas.loop()
    assert.are.equal("closed", r[2])
  end)

  it("takes a copas.wrap object in copas.send and copas.receive too", function()
    local server, port = listener()
    local got, reply
    copas.addserver(server, copas.handler(function(skt)
      copas.removeserver(server)
      got = copas.receive(skt)
      copas.send(skt, got .. "!\n")
    end))
    copas.addthread(function()
      local c = copas.wrap(socket.tcp())
      assert(c:connect("127.0.0.1", port))
      copas.send(c, "hi\n")
      reply = copas.receive(c)
      c:close()
    end)
    copas.loop()
    assert.are.equal("hi", got)
    assert.are.equal("hi!", reply)
  end)

  it("names servers, their handlers and client sockets as copas does", function()
    local server, port = listener()
    local tname, sname, named
    copas.addserver(server, function(skt)
      copas.removeserver(server)
      tname = copas.getthreadname()
      sname = copas.getsocketname(skt)
      copas.setthreadname("renamed")
      named = copas.getthreadname(coroutine.running())
    end, nil, "srv")
    copas.addthread(function()
      local c = copas.wrap(socket.tcp())
      assert(c:connect("127.0.0.1", port))
      copas.setsocketname("client", c)
      assert.are.equal("client", copas.getsocketname(c))
      copas.pause(0.005)
      c:close()
    end)
    copas.loop()
    assert.are.equal("srv:handler_1", tname)
    assert.are.equal("srv:client_1", sname)
    assert.are.equal("renamed", named)
    assert.has_error(function() copas.setthreadname(1) end, "expected arg #1 to be a string")
    assert.has_error(function() copas.getthreadname(1) end, "expected arg #1 to be a coroutine or nil")
  end)

  it("checks the error handler and copas.timeout's delay", function()
    assert.has_error(function() copas.seterrorhandler(1) end, "Expected the handler to be a function, or nil")
    assert.has_error(function() copas.seterrorhandler(nil, true) end,
      "Expected the handler to be a function when setting the default")
    local err
    copas.loop(function()
      err = select(2, pcall(copas.timeout, -1, function() end))
    end)
    assert.matches("timout value must be greater than or equal to 0, got: %-1", err)
  end)

  it("removes a thread with removethread, leaving its token suspended", function()
    local ran = 0
    local t = copas.addthread(function()
      while true do ran = ran + 1; copas.pause(0.002) end
    end)
    copas.addthread(function() copas.pause(0.01); copas.removethread(t) end)
    copas.loop()
    assert.is_true(ran >= 1)
    assert.are.equal("suspended", coroutine.status(t))
    assert.is_true(copas.finished())
  end)

  it("releases waitforexit once the work is done, and runs what the exit starts", function()
    local order = {}
    copas.loop(function()
      copas.addthread(function()
        copas.waitforexit()
        order[#order + 1] = "exit seen"
        copas.addthread(function() copas.pause(0.002); order[#order + 1] = "after exit" end)
      end)
      copas.pause(0.002)
      order[#order + 1] = "work done"
    end)
    assert.are.same({ "work done", "exit seen", "after exit" }, order)
    assert.is_true(copas.exiting())
  end)

  it("step returns true when its wait gave back a socket, false when it timed out (copas's answer)", function()
    assert.is_false(copas.step(0))               -- nothing at all
    local server, port = listener()
    local got
    copas.addthread(function()
      local c = copas.wrap(socket.tcp())
      assert(c:connect("127.0.0.1", port))
      got = c:receive("*l")
      c:close()
    end)
    copas.step(0)                                -- the thread starts its connect
    local peer = assert(server:accept())
    for _ = 1, 3 do copas.step(0) end            -- it connects, then waits to receive
    assert.is_false(copas.step(0.01))            -- nothing came: a timeout
    assert(peer:send("hello\n"))
    assert.is_true(copas.step(1))                -- the line is there (at once)
    assert.is_false(copas.step(0))               -- the thread gets it; then nothing is left
    assert.are.equal("hello", got)
    assert.is_false(copas.step(0))
    peer:close()
    server:close()
  end)

  it("does the TLS handshake of copas.handler and a wrapped client's connect #luasec", function()
    local certs = require("spec.support.certs").generate()
    local server, port = listener()
    local got
    copas.addserver(server, copas.handler(function(skt)
      copas.removeserver(server)
      local line = skt:receive()
      skt:send(line:upper() .. "\n")
    end, certs.server_config()))
    copas.addthread(function()
      local c = copas.wrap(socket.tcp(), certs.client_config())
      assert(c:connect("127.0.0.1", port))
      assert(c:send("hello\n"))
      got = c:receive()
      c:close()
    end)
    copas.loop()
    assert.are.equal("HELLO", got)
  end)

  describe("copas.http redirects", function()
    -- a server answering each request with `reply(path)` (status line, headers, body)
    local function http_server(reply, tls)
      local server, port = listener()
      copas.addserver(server, copas.handler(function(skt)
        local path = skt:receive():match("^%S+ (%S+)")
        repeat local line = skt:receive() until line == "" or line == nil
        skt:send(reply(path))
      end, tls))
      return server, port
    end
    local function ok(body)
      return "HTTP/1.1 200 OK\r\nContent-Length: " .. #body .. "\r\nConnection: close\r\n\r\n" .. body
    end
    local function moved(to)
      return "HTTP/1.1 302 Found\r\nLocation: " .. to .. "\r\nContent-Length: 0\r\n\r\n"
    end

    it("follows a redirect and says where it went", function()
      local b, bport = http_server(function() return ok("final") end)
      local a, aport = http_server(function() return moved("http://127.0.0.1:" .. bport .. "/end") end)
      local r
      copas.addthread(function()
        r = { copas.http.request("http://127.0.0.1:" .. aport .. "/start") }
        copas.removeserver(a); copas.removeserver(b)
      end)
      copas.loop()
      assert.are.equal("final", r[1])
      assert.are.equal(200, r[2])
      assert.are.equal("http://127.0.0.1:" .. bport .. "/end", r[3].location)
    end)

    it("refuses https to http unless redirect = 'all' #luasec", function()
      local certs = require("spec.support.certs").generate()
      local b, bport = http_server(function() return ok("plain") end)
      local a, aport = http_server(function() return moved("http://127.0.0.1:" .. bport .. "/") end,
                                   certs.server_config())
      local refused, allowed
      copas.addthread(function()
        local u = "https://127.0.0.1:" .. aport .. "/"
        refused = { copas.http.request(u) }
        local t = {}
        allowed = { copas.http.request { url = u, redirect = "all", sink = require("ltn12").sink.table(t) } }
        allowed.body = table.concat(t)
        copas.removeserver(a); copas.removeserver(b)
      end)
      copas.loop()
      assert.are.same({ nil, "Unallowed insecure redirect https to http" }, { refused[1], refused[2] })
      assert.are.equal(200, allowed[2])
      assert.are.equal("plain", allowed.body)
    end)
  end)

  it("makes http requests with copas.http (a local server)", function()
    local server, port = listener()
    copas.addserver(server, copas.handler(function(skt)
      copas.removeserver(server)
      repeat local line = skt:receive() until line == ""
      skt:send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
    end))
    local body, code
    copas.addthread(function()
      body, code = copas.http.request("http://127.0.0.1:" .. port .. "/x")
    end)
    copas.loop()
    assert.are.equal("hello", body)
    assert.are.equal(200, code)
  end)
end)
