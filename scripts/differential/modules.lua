-- What each module and method table holds: the sorted names and the type of
-- each value, so that a missing or extra function shows.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local function list(label, t)
  local names = {}
  for k, v in pairs(t) do names[#names + 1] = tostring(k) .. ":" .. type(v) end
  table.sort(names)
  print(label .. ": " .. table.concat(names, " "))
end

list("cosock", cosock)
R.show("cosock._VERSION", cosock._VERSION)
list("cosock.socket", cosock.socket)
list("cosock.channel", cosock.channel)
list("cosock.channel.sender", cosock.channel.sender)
list("cosock.channel.receiver", cosock.channel.receiver)
list("tcp methods", cosock.socket.tcp)
list("udp methods", cosock.socket.udp)
local t = cosock.socket.tcp()
list("tcp wrapper fields", t)
local u = cosock.socket.udp()
list("udp wrapper fields", u)
local tx, rx = cosock.channel.new()
list("sender fields", tx)
list("receiver fields", rx)
list("link fields", tx.link)
R.show("same link", tx.link == rx.link)
local ssl = cosock.ssl
list("cosock.ssl", ssl)
local w = ssl.wrap(t, { mode = "client", protocol = "any", verify = "none" })
list("tls wrapper fields", w)
list("tls methods", getmetatable(w).__index)
R.show("tcp mt __index is tcp", getmetatable(t).__index == cosock.socket.tcp)
R.show("socket.tcp callable", pcall(function() local x = cosock.socket.tcp() x:close() end))
u:close()
