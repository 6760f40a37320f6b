-- http_get.lua: cosock.socket.http.request against a tiny HTTP server that this
-- program runs itself, as a task, on 127.0.0.1 (no outside network).
--
-- Shows: cosock.socket.http (LuaSocket's socket.http through cosock.asyncify)
-- making requests from tasks while the server runs in the same loop; several
-- requests at once.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh http_get
-- Prints, for each of 3 requests, "GET /n -> 200: hello from /n", then "done".

local cosock = require "cosock"
local socket = cosock.socket
local http = socket.http

http.TIMEOUT = 5
local REQUESTS = 3

-- The server: answers every request with a short text body, then closes.
local function serve(server, count)
  for _ = 1, count do
    local c = assert(server:accept())
    c:settimeout(5)
    cosock.spawn(function()
      local request_line = c:receive()
      repeat local header = c:receive() until header == "" or header == nil
      local path = request_line and request_line:match("^GET (%S+)") or "?"
      local body = "hello from " .. path
      c:send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
        .. #body .. "\r\nConnection: close\r\n\r\n" .. body)
      c:close()
    end, "http connection")
  end
  server:close()
end

cosock.spawn(function()
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  cosock.spawn(function() serve(server, REQUESTS) end, "http server")

  local results, left = {}, REQUESTS
  local done_tx, done_rx = cosock.channel.new()
  for i = 1, REQUESTS do
    cosock.spawn(function()
      local body, code = http.request("http://127.0.0.1:" .. port .. "/" .. i)
      results[i] = string.format("GET /%d -> %s: %s", i, tostring(code), tostring(body))
      left = left - 1
      if left == 0 then done_tx:send(true) end
    end, "request " .. i)
  end
  done_rx:settimeout(10)
  assert(done_rx:receive(), "requests did not finish")
  for i = 1, REQUESTS do print(results[i]) end
  print("done")
end, "main")

cosock.run()
