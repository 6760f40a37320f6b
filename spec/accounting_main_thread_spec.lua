-- get_thread_metadata's `allocated` when cosock is first loaded, and
-- accounting turned on, off the main thread (README, "What differs between
-- Lua versions"): 5.2 and later find the main thread in the registry and
-- count; 5.1 and LuaJIT keep no reference to it, so there nothing is counted
-- (the field stays 0) while `busy` and `resumes` are measured as everywhere.

local V = require "spec.support.version"

-- A child Lua: cosock required and accounting turned on inside a coroutine,
-- one task that makes a 1 MB string; prints allocated, busy > 0, resumes.
local CHILD = [[
local m
coroutine.wrap(function()
  m = require "cosock"
  m.set_accounting(true)
end)()
local e
m.spawn(function()
  local s = string.rep("x", 1000000)
  for _, v in pairs(m.get_thread_metadata()) do e = v end
  return #s
end, "alloc")
m.run()
io.write(string.format("%d %s %d", e.allocated, tostring(e.busy > 0), e.resumes))
]]

describe("accounting when cosock is loaded off the main thread", function()
  it("counts allocated bytes where Lua names its main thread, and none on 5.1 and LuaJIT", function()
    -- (turned on from the main thread it counts on 5.1 and LuaJIT too:
    -- accounting_spec)
    local lua = require "spec.support.interpreter"
    local tmp = os.tmpname()
    local f = assert(io.open(tmp, "w"))
    f:write(CHILD)
    f:close()
    local p = io.popen(string.format("LUA_PATH=%q LUA_CPATH=%q %s %s 2>&1",
      package.path, package.cpath, lua, tmp))
    local out = p:read("*a")
    p:close()
    os.remove(tmp)
    local allocated, busy, resumes = out:match("^(%d+) (%a+) (%d+)$")
    assert.is_not_nil(allocated, out)
    assert.equal("true", busy)
    assert.equal("1", resumes)
    if V.integers or _VERSION == "Lua 5.2" then
      assert.is_true(tonumber(allocated) >= 1000000, out)
    else
      assert.equal("0", allocated)
    end
  end)
end)
