-- http_partial: rtyle/st-edge's HTTP client (driver/denon-avr/package/src/http.lua,
-- unchanged) against a local server. The client reads with settimeout(0),
-- select and receive(2048), so it sees partial data; the server writes each
-- reply in pieces with pauses in between. Three replies: chunked,
-- Content-Length, and HTTP/1.0 read to the close.
-- needs: st_edge
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("st_edge", "driver/denon-avr/package/src")
local cosock = require "cosock"
local http = require "http"

local srv, port = H.listen()
local big = string.rep("0123456789abcdef", 256) -- 4096 bytes: more than one receive(2048)
local replies = {
  { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "5\r\nhello\r\n", "7\r\n, there\r\n",
    "0\r\n\r\n" },
  { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" .. big:sub(1, 1000), big:sub(1001, 3000),
    big:sub(3001) .. "\r\n0\r\n\r\n" },
  { "HTTP/1.1 200 OK\r\nContent-Length: 26\r\n", "\r\nabcdefghijklm", "nopqrstuvwxyz" },
  { "HTTP/1.0 200 OK\r\nServer: x\r\n\r\n", "first part, ", "second part" },
}

H.task("server", function()
  for i, pieces in ipairs(replies) do
    local c = assert(srv:accept())
    local req = H.read_request(c)
    H.say("server: request " .. i, req.line)
    for _, p in ipairs(pieces) do
      assert(c:send(p))
      cosock.socket.sleep(0.05)
    end
    if i == #replies then c:close() else
      c:settimeout(5)
      c:receive("*a") -- until the client closes
      c:close()
    end
  end
  srv:close()
end)

H.task("client", function()
  for i = 1, #replies do
    local r, err = http:get(string.format("http://127.0.0.1:%d/reply/%d", port, i), 2)
    if not r then
      H.say("client: reply " .. i, "error", err)
    else
      local keys = {}
      for k, v in pairs(r[2]) do keys[#keys + 1] = k .. "=" .. v end
      table.sort(keys)
      local body = r[3]
      local shown = body == nil and "no body" or #body <= 40 and string.format("body %q", body)
        or string.format("body of %d bytes, %s", #body, body == big and "the 4096 sent" or "NOT the 4096 sent")
      H.say("client: reply " .. i, table.concat(r[1], " "), table.concat(keys, ","), shown)
    end
  end
end)
H.run()
