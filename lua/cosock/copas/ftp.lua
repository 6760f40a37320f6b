--- cosock.copas.ftp: copas 4.11's copas.ftp on cosock-native: LuaSocket's
--- socket.ftp (a private copy) with copas sockets. put(url, body) / put(t),
--- get(url) / get(t), command(t); other fields (PORT, TIMEOUT, USER,
--- PASSWORD) are LuaSocket's, and setting them sets them there.
local copas = require "cosock.copas"
local socket = require "socket"
local url = require "socket.url"
local ltn12 = require "ltn12"
local lftp = require("cosock.copas.luasocket")("socket.ftp")

local function create() return copas.wrap(socket.tcp()) end

local forwards = { PORT = true, TIMEOUT = true, PASSWORD = true, USER = true }
local M = setmetatable({}, {
  __index = lftp,
  __newindex = function(self, k, v)
    if forwards[k] then lftp[k] = v else rawset(self, k, v) end
  end,
})

local function parse(u)
  local t = socket.try(url.parse(u, { path = "/", scheme = "ftp" }))
  socket.try(t.scheme == "ftp", "wrong scheme '" .. tostring(t.scheme) .. "'")
  socket.try(t.host, "missing hostname")
  if t.params then
    t.type = socket.skip(2, string.find(t.params, "^type=(.)$"))
    socket.try(t.type == "a" or t.type == "i", "invalid type '" .. tostring(t.type) .. "'")
  end
  return t
end

--- parseRequest(url [, body]) -> a put table (body given) or a get table
--- with `target`, the list its sink fills.
function M.parseRequest(u, body)
  local t = parse(u)
  if body then
    t.source = ltn12.source.string(body)
  else
    t.target = {}
    t.sink = ltn12.sink.table(t.target)
  end
  return t
end

M.put = socket.protect(function(putt, body)
  if type(putt) == "string" then
    local t = M.parseRequest(putt, body)
    t.create = create
    return lftp.put(t)
  end
  putt.create = putt.create or create
  return lftp.put(putt)
end)

M.get = socket.protect(function(gett)
  if type(gett) == "string" then
    local t = M.parseRequest(gett)
    t.create = create
    socket.try(lftp.get(t))
    return table.concat(t.target)
  end
  gett.create = gett.create or create
  return lftp.get(gett)
end)

function M.command(cmdt)
  cmdt.create = cmdt.create or create
  return lftp.command(cmdt)
end

copas.ftp = M
return M
