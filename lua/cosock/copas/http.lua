--- cosock.copas.http: copas 4.11's copas.http on cosock-native: copas's
--- request (redirects, https through LuaSec, timeouts) written over the
--- connection object of LuaSocket's socket.http (a private copy).
--- request(url [, body]) -> body, code, headers, status | nil, err;
--- request(reqt) -> 1, code, headers, status | nil, err, where reqt may
--- carry timeout = seconds or { connect =, send =, receive = } and
--- create = function(reqt) -> socket. getcreatefunc(params), parseRequest,
--- and the settings TIMEOUT, PORT, USERAGENT, SSLPORT, SSLPROTOCOL,
--- SSLOPTIONS, SSLVERIFY, SSLSNISTRICT are copas's; so are redirects (up to
--- 5; an https to http one only with reqt.redirect = "all").
local copas = require "cosock.copas"
local socket = require "socket"
local url = require "socket.url"
local ltn12 = require "ltn12"
local mime = require "mime"
-- LuaSocket's socket.http (a private copy): its connection object's send and
-- receive methods, on copas sockets.
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
  local strict = sni.strict
  if strict == nil then strict = M.SSLSNISTRICT end
  return { wrap = t, sni = { names = sni.names or host, strict = strict } }
end

--- getcreatefunc(params) -> create(reqt): a copas socket for reqt's scheme
--- (TLS for https, with params.sslparams, or params.protocol/options/verify).
--- One create follows one request and its redirects: after https, a
--- redirect to http raises "Unallowed insecure redirect https to http"
--- unless params.redirect is "all".
function M.getcreatefunc(params)
  params = params or {}
  local washttps = false
  return function(reqt)
    local u = url.parse(reqt.url or "")
    if (reqt.scheme or u.scheme) == "https" then
      washttps = true
      return copas.wrap(socket.tcp(), tls_params(params, u.host or reqt.host))
    end
    if washttps and params.redirect ~= "all" then
      socket.try(nil, "Unallowed insecure redirect https to http")
    end
    return copas.wrap(socket.tcp())
  end
end

-- The request, as copas 4.11 makes it, on LuaSocket's http connection
-- object (its open and the send/receive methods of what open returns).

local function request_uri(nreqt)
  if nreqt.proxy or M.PROXY then return url.build(nreqt) end
  return url.build({
    path = socket.try(nreqt.path, "invalid path 'nil'"),
    params = nreqt.params, query = nreqt.query, fragment = nreqt.fragment,
  })
end

local function request_headers(nreqt)
  local t = {
    ["user-agent"] = M.USERAGENT,
    ["host"] = (nreqt.authority or nreqt.host):gsub("^.-@", ""),
    ["connection"] = "close, TE",
    ["te"] = "trailers",
  }
  if nreqt.user and nreqt.password then
    t["authorization"] = "Basic " .. mime.b64(nreqt.user .. ":" .. nreqt.password)
  end
  for k, v in pairs(nreqt.headers or {}) do t[k:lower()] = v end
  return t
end

local DEFAULTS = { host = "", port = M.PORT, path = "/", scheme = "http" }

local function prepare(reqt)
  local nreqt = reqt.url and url.parse(reqt.url, DEFAULTS) or {}
  for k, v in pairs(reqt) do nreqt[k] = v end
  if nreqt.port == "" then nreqt.port = M.PORT end
  if nreqt.scheme == "https" and (nreqt.port == nil or nreqt.port == M.PORT)
      and not (reqt.url and url.parse(reqt.url).port) then
    nreqt.port = M.SSLPORT
  end
  socket.try(nreqt.host and nreqt.host ~= "", "invalid host '" .. tostring(nreqt.host) .. "'")
  nreqt.uri = reqt.uri or request_uri(nreqt)
  local proxy = reqt.proxy or M.PROXY
  if proxy then
    local p = url.parse(proxy)
    nreqt.host, nreqt.port = p.host, p.port or 3128
  end
  nreqt.headers = request_headers(nreqt)
  return nreqt
end

local REDIRECT = { [301] = true, [302] = true, [303] = true, [307] = true }

local function should_redirect(nreqt, code, headers)
  local loc = headers.location
  return loc and loc:gsub("%s", "") ~= "" and nreqt.redirect ~= false and REDIRECT[code]
    and (not nreqt.method or nreqt.method == "GET" or nreqt.method == "HEAD")
    and (not nreqt.nredirects or nreqt.nredirects < 5)
end

local function has_body(nreqt, code)
  return nreqt.method ~= "HEAD" and code ~= 204 and code ~= 304 and not (code >= 100 and code < 200)
end

local trequest

local function redirect(reqt, location)
  local result, code, headers, status = trequest {
    url = url.absolute(reqt.url, location),
    source = reqt.source, sink = reqt.sink, headers = reqt.headers, proxy = reqt.proxy,
    nredirects = (reqt.nredirects or 0) + 1, create = reqt.create, timeout = reqt.timeout,
    redirect = reqt.redirect,
  }
  headers = headers or {}
  headers.location = headers.location or location
  return result, code, headers, status
end

function trequest(reqt)
  local nreqt = prepare(reqt)
  local sock = socket.try(nreqt.create(nreqt))
  local h = lhttp.open(nreqt.host, nreqt.port, function() return with_timeouts(sock, nreqt) end)
  h:sendrequestline(nreqt.method, nreqt.uri)
  h:sendheaders(nreqt.headers)
  if nreqt.source then h:sendbody(nreqt.headers, nreqt.source, nreqt.step) end
  local code, status = h:receivestatusline()
  if not code then -- HTTP/0.9: the rest is the body
    h:receive09body(status, nreqt.sink, nreqt.step)
    return 1, 200
  end
  while code == 100 do
    h:receiveheaders()
    code, status = h:receivestatusline()
  end
  local headers = h:receiveheaders()
  if should_redirect(nreqt, code, headers) and not nreqt.source then
    h:close()
    return redirect(reqt, headers.location)
  end
  if has_body(nreqt, code) then h:receivebody(headers, nreqt.sink, nreqt.step) end
  h:close()
  return 1, code, headers, status
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

--- request(url [, body]) -> body, code, headers, status | nil, err;
--- request(reqt) -> 1, code, headers, status | nil, err.
M.request = socket.protect(function(reqt, body)
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
  reqt.create = reqt.create or M.getcreatefunc(reqt)
  return trequest(reqt)
end)

copas.http = M
return M
