-- rest_case.lua: the lunchbox REST client (a driver's src/lunchbox/rest.lua,
-- unchanged) against a local keep-alive HTTP server: GET with a
-- Content-Length body, GET with a chunked body, POST, PUT, then the server
-- closes the connection and the client's next GET finds it closed and, with a
-- retry function, reconnects. The hub API level is 9 (stubs/version.lua), so
-- responses are read by luncheon's Response.tcp_source; the client's older
-- path for levels below 9 reads a Content-Length body line by line and waits
-- for its timeout, which says nothing about cosock.
--   dofile(lib .. "/rest_case.lua")(H, "drivers/SmartThings/jbl/src", builder, tls)
-- builder(port): the socket builder to pass, or nil for the driver's default.
-- tls: nil for HTTP, or {key = file, certificate = file} (H.make_cert) for
-- HTTPS: the server wraps each connection with cosock.ssl in server mode and
-- the client's URL is https://.

return function(H, driver_src, builder, tls)
  H.use("edge", driver_src)
  H.use("neturl", "lib")
  H.use("luncheon")
  local cosock = require "cosock"
  local srv, port = H.listen()

  local function reply(c, req)
    local path = req.line:match("^%S+ (%S+)")
    if path == "/chunked" then
      return c:send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        .. "6\r\n{\"a\":1\r\n8\r\n,\"b\":22}\r\n0\r\n\r\n")
    end
    local body = req.line:match("^%S+") .. " " .. path .. (req.body and (" " .. req.body) or "")
    return c:send(string.format("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
      .. "Content-Length: %d\r\n\r\n%s", #body, body))
  end

  -- Serves up to `count` requests on each connection, then closes it, until
  -- the client is done. The listener's short timeout lets it see `done`
  -- without a connection that never comes.
  local done = false
  local function serve(count)
    done = false
    H.task("rest server", function()
      srv:settimeout(0.2)
      while not done do
        local c = srv:accept()
        if c and tls then
          c:settimeout(5)
          c = assert(require("cosock.ssl").wrap(c, { mode = "server", protocol = "any",
            key = tls.key, certificate = tls.certificate }))
          local ok, err = c:dohandshake()
          if not ok then
            H.say("server: handshake failed", err)
            c:close()
            c = nil
          end
        end
        if c then
          c:settimeout(5)
          for _ = 1, count do
            local req = H.read_request(c)
            if not req.line then break end
            H.say("server: " .. req.line, "host=" .. tostring(req.headers.host ~= nil))
            assert(reply(c, req))
          end
          c:close()
        end
      end
    end)
  end

  local function show(label, res, err, partial)
    if not res then return H.say(label, "error", err, partial) end
    local body, berr = res:get_body()
    H.say(label, res.status, string.format("%q", tostring(body)), berr)
  end

  do
    local RestClient = require "lunchbox.rest"
    serve(4)
    H.task("client", function()
      local client = RestClient.new(string.format("%s://127.0.0.1:%d", tls and "https" or "http", port), builder and builder(port))
      show("client: GET /plain", client:get("/plain"))
      show("client: GET /chunked", client:get("/chunked"))
      show("client: POST /p", client:post("/p", "body=1"))
      show("client: PUT /q", client:put("/q", "v"))
      local tries = 0
      show("client: GET /after-close", client:get("/after-close", nil, function()
        tries = tries + 1
        return tries <= 3
      end))
      show("client: GET /again", client:get("/again"))
      client:shutdown()
      show("client: GET after shutdown", client:get("/x"))
      done = true
    end)
    H.run()
  end
end
