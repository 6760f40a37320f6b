-- spec/support/version.lua: what differs between the Luas the specs run on
-- (5.1, 5.2, 5.3, 5.4, LuaJIT), for specs that branch on it. Every branch of
-- such a spec asserts something; this only names the differences.
--
--   local V = require "spec.support.version"

local V = {}

V.jit = rawget(_G, "jit") ~= nil
--- PUC Lua 5.1: cannot yield across pcall or a C call.
V.puc51 = _VERSION == "Lua 5.1" and not V.jit
--- Lua 5.3 and 5.4: numbers have an integer subtype.
V.integers = math.type ~= nil

--- Lua's own messages for a yield across a C call (where nothing can yield:
--- a callback from C without a continuation; on PUC 5.1 also inside pcall)
--- (a cosock wait outside any task says more: V.WAIT_OUTSIDE).
if V.puc51 then
  V.YIELD_ACROSS = "attempt to yield across metamethod/C-call boundary"
elseif V.jit then
  V.YIELD_ACROSS = "attempt to yield across C-call boundary"
else
  V.YIELD_ACROSS = "attempt to yield across a C-call boundary"
end
--- A cosock wait on the main thread, on every version: Lua's words for a
--- yield there (5.3's), then what to do instead.
V.WAIT_OUTSIDE = "attempt to yield from outside a coroutine (a cosock wait must run in a task: "
  .. "call it from a function given to cosock.spawn, then cosock.run())"

--- The argument number an argument error of a method that waits gives for
--- argument n of a method call (self not counted). On 5.1, 5.2 and LuaJIT
--- those methods are Lua functions that call the C function as a plain
--- function (doc/lua-versions.md), so the count includes self there.
function V.method_arg(n)
  if V.integers then return n end
  return n + 1
end

--- The largest and smallest integers: math.maxinteger / math.mininteger
--- where they exist; before 5.3, where numbers are doubles, +-2^53 (the end
--- of the exact integers).
V.maxinteger = math.maxinteger or 2 ^ 53
V.mininteger = math.mininteger or -2 ^ 53

--- describe(v): a number as "<subtype> <tostring>" where numbers have
--- subtypes (5.3+: "integer 7", "float 1.0"); before 5.3, where they have
--- none, "number <tostring>" ("number 7", "number 1").
function V.describe(v)
  if V.integers then return math.type(v) .. " " .. tostring(v) end
  return type(v) .. " " .. tostring(v)
end

--- What describe gives for the integer / the float written `text` (as 5.3
--- prints it): int("7") is "integer 7" on 5.3+, "number 7" before;
--- float("1.0") is "float 1.0" on 5.3+, "number 1" before (the value, as
--- that Lua prints it).
function V.int(text)
  if V.integers then return "integer " .. text end
  return "number " .. tostring(tonumber(text))
end
function V.float(text)
  if V.integers then return "float " .. text end
  return "number " .. tostring(tonumber(text))
end

--- coroutine.create's own error for a value that is not a function (the
--- message spawn passes on): PUC 5.1 words it without the type.
function V.create_error(typename)
  if V.puc51 then return "bad argument #1 to 'create' (Lua function expected)" end
  return "bad argument #1 to 'create' (function expected, got " .. typename .. ")"
end

--- The searchers of require (package.loaders before 5.2).
V.searchers = package.searchers or package.loaders

--- Makes a garbage object whose finalizer is fn: a table on 5.2+, a
--- newproxy userdata on 5.1 and LuaJIT (their tables have no __gc).
function V.garbage(fn)
  if rawget(_G, "newproxy") then
    local p = newproxy(true)
    getmetatable(p).__gc = fn
    return p
  end
  return setmetatable({}, { __gc = fn })
end

return V
