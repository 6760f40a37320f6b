-- luxure: cosock/luxure's HTTP server (routes, a parameter, a POST body, a
-- handler error, a 404) with a client task that sends one request per
-- connection and reads each reply to its end. The server loop stops accepting
-- after the last request (its should_continue argument), so run returns.
-- needs: luxure luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("luxure")
H.use("luncheon")
H.use("neturl", "lib")
local cosock = require "cosock"
local lux = require "luxure"

local server = lux.Server.new(lux.Opts.new():set_env("production"))
server:get("/", function(_, res) res:send("Hello world!") end)
server:get("/hello/:name", function(req, res) res:send("Hello " .. req.params.name) end)
server:post("/echo", function(req, res) res:send("got " .. tostring(req:get_body())) end)
server:get("/fail", function() lux.Error.assert(false, "I always fail") end)
server:set_ip("127.0.0.1"):listen(0)
local port = server.port

local requests = {
  "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
  "GET /hello/cosock HTTP/1.1\r\nHost: x\r\n\r\n",
  "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello there",
  "GET /fail HTTP/1.1\r\nHost: x\r\n\r\n",
  "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",
}

H.task("client", function()
  for i, r in ipairs(requests) do
    local c = assert(cosock.socket.tcp())
    c:settimeout(5)
    assert(c:connect("127.0.0.1", port))
    assert(c:send(r))
    local all, err, partial = c:receive("*a")
    local reply = all or partial or ""
    H.say("client: request " .. i, r:match("^[^\r]*"), err)
    for line in (reply .. "\n"):gmatch("([^\n]*)\n") do
      line = line:gsub("\r$", "")
      if not line:match("^[Dd]ate:") then H.say("  " .. line) end
    end
    c:close()
  end
end)

local served = 0
server:run(function(err) H.say("server: error callback", err) return true end,
  function() served = served + 1; return served <= #requests end)
H.say("server:run returned")
