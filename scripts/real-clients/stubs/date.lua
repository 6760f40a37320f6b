-- Stub of LuaDate (the "date" module st-edge's drivers install with luarocks;
-- it is not in their repository): only what upnp.lua's epoch_time uses,
-- date.diff(date(true), date.epoch()):spanseconds(), the seconds since 1970.
local date = setmetatable({}, {
  __call = function() return { t = os.time() } end,
})
function date.epoch() return { t = 0 } end
function date.diff(a, b)
  return { spanseconds = function() return a.t - b.t end }
end
return date
