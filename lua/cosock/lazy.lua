--- cosock.lazy: fields of a module table that are modules loaded on first
--- use, so that a program pays (in Lua heap) only for what it touches.
---
--- lazy(t, fields [, unlisted]) -> t, with a metatable where
---   fields    name -> module name: t[name] is require(module) the first time
---             it is read, then a plain field of t (no metamethod after that)
---   unlisted  a set of names pairs(t) leaves alone until they are read
---             (socket.http: cosock 0.2.0 does not list it either)
--- On Lua 5.2 and later pairs(t) loads the other fields first, in the order
--- of their names (one whose module fails to load, cosock.ssl without LuaSec,
--- is left out), then lists t's fields. Lua 5.1 and LuaJIT have no __pairs:
--- there pairs(t) lists the fields loaded so far (doc/footprint.md).
local require, rawget, rawset, pcall, next, pairs, setmetatable, sort =
  require, rawget, rawset, pcall, next, pairs, setmetatable, table.sort

return function(t, fields, unlisted)
  local listed = {}
  for k in pairs(fields) do
    if not (unlisted and unlisted[k]) then listed[#listed + 1] = k end
  end
  sort(listed)
  return setmetatable(t, {
    __index = function(self, k)
      local name = fields[k]
      if name == nil then return nil end
      local v = require(name)
      rawset(self, k, v)
      return v
    end,
    __pairs = function(self)
      for i = 1, #listed do
        local k = listed[i]
        if rawget(self, k) == nil then
          local ok, v = pcall(require, fields[k])
          if ok then rawset(self, k, v) end
        end
      end
      return next, self, nil
    end,
  })
end
