--- cosock.compat: the few Lua 5.3 library functions the Lua layer uses, on
--- every Lua it runs on (5.1, 5.2, 5.3, 5.4, LuaJIT). Where the running Lua
--- has the function, it is that function.
local select, type, floor = select, type, math.floor

local M = {}

--- PUC Lua 5.1 (not LuaJIT, which says 5.1 too): no yield across pcall, and
--- a tail call counts as a stack level.
M.puc51 = _VERSION == "Lua 5.1" and not rawget(_G, "jit")

M.unpack = table.unpack or unpack

M.pack = table.pack or function(...)
  return { n = select("#", ...), ... }
end

--- coroutine.isyieldable where Lua has it (5.3, 5.4, LuaJIT); on 5.1 and 5.2:
--- in a coroutine other than the main one (a yield across a C call then still
--- fails, with Lua's own message).
M.isyieldable = coroutine.isyieldable or function()
  local co, main = coroutine.running()
  return co ~= nil and not main
end

--- math.type where Lua has it; before 5.3 every number is a float that
--- prints as an integer when it is one: "integer" for an integral value.
M.math_type = math.type or function(x)
  if type(x) ~= "number" then return nil end
  if x == floor(x) and x - 1 ~= x then return "integer" end
  return "float"
end

--- math.tointeger where Lua has it; before 5.3 an integral number is its own
--- integer.
M.tointeger = math.tointeger or function(x)
  if M.math_type(x) == "integer" then return x end
  return nil
end

--- pcall(f, ...), but one that a task may wait inside (yield across) on
--- every Lua. PUC Lua 5.1 cannot yield across pcall: there f runs in a
--- coroutine of its own whose yields are passed on to the caller's resumer
--- and its answers back (the coxpcall way). Elsewhere it is pcall. Outside
--- any coroutine, and for a value that is not a function, it is pcall too.
if M.puc51 then
  local create, resume, yield, status, running =
    coroutine.create, coroutine.resume, coroutine.yield, coroutine.status, coroutine.running
  local function step(co, ok, ...)
    if not ok then return false, ... end
    if status(co) == "dead" then return true, ... end
    return step(co, resume(co, yield(...)))
  end
  M.pcall = function(f, ...)
    if type(f) ~= "function" or running() == nil then return pcall(f, ...) end
    local co = create(f)
    return step(co, resume(co, ...))
  end
else
  M.pcall = pcall
end

return M
