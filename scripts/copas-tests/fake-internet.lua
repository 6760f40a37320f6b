-- The hosts that copas 4.11's connecttwice.lua and httpredirect.lua reach,
-- played on 127.0.0.1 (scripts/copas-tests.sh runs this in a network and
-- mount namespace of its own, with /etc/hosts naming them 127.0.0.1): port
-- 80 plain, port 443 TLS (CERT, KEY), each answering by Host and path with
-- the redirects those tests follow. A cosock program; runs until killed.
-- Usage: fake-internet.lua CERT KEY
local cosock = require "cosock"
local socket, ssl = cosock.socket, cosock.ssl
local cert, key = arg[1], arg[2]

local function reply(code, location, body)
  body = body or ""
  local head = ("HTTP/1.1 %d %s\r\n"):format(code, code == 200 and "OK" or "Moved Permanently")
  if location then head = head .. "Location: " .. location .. "\r\n" end
  return head .. "Content-Length: " .. #body .. "\r\nConnection: close\r\n\r\n" .. body
end

-- host/path -> what it answers
local routes = {
  ["goo.gl/UBCUc5"] = function() return reply(301, "https://github.com/lunarmodules/luasec") end,
  ["github.com/lunarmodules/luasec"] = function() return reply(200, nil, "luasec") end,
  ["bit.ly/3vmhXhW"] = function() return reply(301, "http://www.httpvshttps.com/") end,
  ["www.httpvshttps.com/"] = function() return reply(200, nil, "plain http") end,
}

local function serve(c)
  c:settimeout(10)
  local first = c:receive()
  if not first then c:close(); return end -- (connecttwice only connects)
  local path = first:match("^%S+ (%S+)") or "/"
  local host = ""
  while true do
    local line = c:receive()
    if not line or line == "" then break end
    local h = line:match("^[Hh]ost:%s*(%S+)")
    if h then host = h:gsub(":%d+$", "") end
  end
  local route = routes[host .. path]
  c:send(route and route() or reply(404, nil, "no route " .. host .. path))
  c:close()
end

local function listen(port, tls)
  local server = assert(socket.bind("127.0.0.1", port))
  cosock.spawn(function()
    while true do
      local c = assert(server:accept())
      cosock.spawn(function()
        if tls then
          c = assert(ssl.wrap(c, { mode = "server", protocol = "any", key = key, certificate = cert }))
          c:settimeout(10)
          if not c:dohandshake() then c:close(); return end
        end
        serve(c)
      end, "conn")
    end
  end, "listen " .. port)
end

listen(80)
listen(443, true)
print("fake internet ready")
io.stdout:flush()
cosock.run()
