--- cosock.copas.smtp: copas 4.11's copas.smtp on cosock-native: LuaSocket's
--- socket.smtp (a private copy) whose send uses copas sockets; the other
--- fields (message, PORT, SERVER, TIMEOUT, DOMAIN, TIMEZONE) are
--- LuaSocket's, and setting them sets them there.
local copas = require "cosock.copas"
local socket = require "socket"
local lsmtp = require("cosock.copas.luasocket")("socket.smtp")

local function create() return copas.wrap(socket.tcp()) end

local forwards = { PORT = true, SERVER = true, TIMEOUT = true, DOMAIN = true, TIMEZONE = true }
local M = setmetatable({}, {
  __index = lsmtp,
  __newindex = function(self, k, v)
    if forwards[k] then lsmtp[k] = v else rawset(self, k, v) end
  end,
})

function M.send(mailt)
  mailt.create = mailt.create or create
  return lsmtp.send(mailt)
end

copas.smtp = M
return M
