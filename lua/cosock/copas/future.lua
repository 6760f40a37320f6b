--- cosock.copas.future: copas 4.11's futures (copas.future) on cosock-native.
--- future.addthread(fn, ...) / future.addnamedthread(name, fn, ...) -> f;
--- f:get() (or f()) -> true, results... | false, err (waits); f:try() ->
--- PENDING | SUCCESS, results... | ERROR, err; f:cancel() -> true | false.
local copas = require "cosock.copas"
local semaphore = require "cosock.copas.semaphore"
local compat = require "cosock.compat"

local pack, unpack, ypcall = compat.pack, compat.unpack, compat.pcall
local setmetatable, error, tostring = setmetatable, error, tostring
local huge = math.huge

local M = { SUCCESS = true, PENDING = false, ERROR = "error" }
setmetatable(M, { __index = function(_, k)
  error("unknown field 'future." .. tostring(k) .. "'", 2)
end })

local future = {}
future.__index = future
future.__call = function(self, ...) return self:get(...) end

function future:get()
  if not self.results then self.sema:take(1, huge) end
  local r = self.results
  return unpack(r, 1, r.n)
end

function future:try()
  local r = self.results
  if not r then return M.PENDING end
  if r[1] then return M.SUCCESS, unpack(r, 2, r.n) end
  return M.ERROR, r[2]
end

local function settle(self, results)
  self.results = results
  local n = self.sema:get_wait()
  if n > 0 then self.sema:give(n) end
end

function future:cancel()
  if self.results then return false end
  settle(self, pack(false, "cancelled"))
  copas.removethread(self.coro)
  return true
end

function M.addnamedthread(name, func, ...)
  local f = setmetatable({ sema = semaphore.new(9999, 0, huge) }, future)
  f.coro = copas.addnamedthread(name, function(...)
    local results = pack(ypcall(func, ...))
    if not f.results then settle(f, results) end
  end, ...)
  return f
end

function M.addthread(func, ...)
  return M.addnamedthread(nil, func, ...)
end

return M
