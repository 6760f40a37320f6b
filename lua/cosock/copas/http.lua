--- cosock.copas.http: copas 4.11's copas.http on cosock-native: LuaSocket's
--- socket.http (a private copy) with copas sockets, https through LuaSec.
--- request(url [, body]) -> body, code, headers, status | nil, err;
--- request(reqt) -> 1, code, headers, status | nil, err, where reqt may
--- carry timeout = seconds or { connect =, send =, receive = } and
--- create = function(reqt) -> socket. getcreatefunc(params), parseRequest,
--- and the settings TIMEOUT, PORT, USERAGENT, SSLPORT, SSLPROTOCOL,
--- SSLOPTIONS, SSLVERIFY, SSLSNISTRICT are copas's. doc/copas.md says where
--- it differs (redirects follow LuaSocket's rules).
local copas = require "cosock.copas"
local socket = require "socket"
local url = require "socket.url"
local ltn12 = require "ltn12"
local lhttp = require("cosock.copas.luasocket")("socket.http")

local M = {
  TIMEOUT = 60, PORT = 80, USERAGENT = socket._VERSION,
  SSLPORT = 443, SSLPROTOCOL = "tlsv1_2", SSLOPTIONS = "all", SSLVERIFY = "none",
  SSLSNISTRICT = false,
}

-- Applies reqt.timeout (or M.TIMEOUT) to the copas socket; the http code's
-- own settimeout call is then ignored.
local function with_timeouts(sock, reqt)
  local to = reqt.timeout or M.TIMEOUT
  if type(to) == "table" then
    sock:settimeouts(to.connect or M.TIMEOUT, to.send or M.TIMEOUT, to.receive or M.TIMEOUT)
  else
    sock:settimeout(to)
  end
  sock.settimeout = function() return 1 end
  return sock
end

local function tls_params(params, host)
  params = params or {}
  local sp = params.sslparams or {}
  local w = sp.wrap or { protocol = params.protocol, options = params.options, verify = params.verify }
  local t = {}
  for k, v in pairs(w) do t[k] = v end
  t.protocol = t.protocol or M.SSLPROTOCOL
  t.options = t.options or M.SSLOPTIONS
  if t.verify == nil then t.verify = M.SSLVERIFY end
  t.mode = "client"
  local sni = sp.sni or {}
  return { wrap = t, sni = { names = sni.names or host, strict = sni.strict == nil and M.SSLSNISTRICT or sni.strict } }
end

--- getcreatefunc(params) -> function(reqt): a copas socket for reqt's
--- scheme (TLS for https, with params.sslparams, or protocol/options/verify).
function M.getcreatefunc(params)
  return function(reqt)
    local u = url.parse(reqt.url or "")
    if (reqt.scheme or u.scheme) == "https" then
      return copas.wrap(socket.tcp(), tls_params(params, reqt.host or u.host))
    end
    return copas.wrap(socket.tcp())
  end
end

-- LuaSocket asks its schemes for a socket maker when the request has none
-- (and again after a redirect to another scheme): copas sockets.
lhttp.schemes.http.create = function(reqt)
  return function() return with_timeouts(copas.wrap(socket.tcp()), reqt) end
end
lhttp.schemes.https.create = function(reqt)
  return function()
    return with_timeouts(copas.wrap(socket.tcp(), tls_params(reqt, reqt.host)), reqt)
  end
end

function M.parseRequest(u, b)
  local reqt = { url = u, target = {} }
  reqt.sink = ltn12.sink.table(reqt.target)
  if b then
    reqt.source = ltn12.source.string(b)
    reqt.headers = { ["content-length"] = #b, ["content-type"] = "application/x-www-form-urlencoded" }
    reqt.method = "POST"
  end
  return reqt
end

function M.request(reqt, body)
  if type(reqt) == "string" then
    local t = M.parseRequest(reqt, body)
    local ok, code, headers, status = M.request(t)
    if ok then return table.concat(t.target), code, headers, status end
    return nil, code
  end
  if type(reqt.timeout) == "table" then
    local allowed = { connect = true, send = true, receive = true }
    for k in pairs(reqt.timeout) do
      assert(allowed[k], "'" .. tostring(k) .. "' is not a valid timeout option. Valid: 'connect', 'send', 'receive'")
    end
  end
  local create = reqt.create
  if create then
    -- copas calls create(reqt); LuaSocket calls it with no argument
    reqt.create = function() return with_timeouts(create(reqt), reqt) end
  end
  lhttp.USERAGENT = M.USERAGENT
  local r = { lhttp.request(reqt) }
  reqt.create = create
  return (table.unpack or unpack)(r, 1, 4)
end

copas.http = M
return M
