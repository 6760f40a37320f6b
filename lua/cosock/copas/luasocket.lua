--- cosock.copas.luasocket: a private copy of one of LuaSocket's Lua modules
--- (socket.http, socket.ftp, socket.smtp, socket.tp), loaded after
--- cosock.copas made socket.protect/newtry/try ones a thread may wait in
--- (a copy loaded earlier keeps LuaSocket's own). Its requires are the
--- usual ones; package.loaded is not touched.
require "cosock.copas" -- (socket.protect, socket.newtry, socket.try)

local cache = {}

local function search(name)
  local file = name:gsub("%.", "/")
  for template in package.path:gmatch("[^;]+") do
    local path = template:gsub("%?", file)
    local f = io.open(path, "r")
    if f then
      f:close()
      return path
    end
  end
  error("cosock.copas: LuaSocket's module '" .. name .. "' not found in package.path", 3)
end

return function(name)
  local mod = cache[name]
  if mod then return mod end
  local path = search(name)
  local env = setmetatable({}, { __index = _G })
  env.require = function(n)
    if n == "socket.tp" or n == "socket.http" then return cache[n] or require("cosock.copas.luasocket")(n) end
    return require(n)
  end
  local chunk, err
  if setfenv then
    chunk, err = loadfile(path)
    if chunk then setfenv(chunk, env) end
  else
    chunk, err = loadfile(path, "t", env)
  end
  if not chunk then error(err, 2) end
  mod = chunk(name)
  cache[name] = mod
  return mod
end
