-- What `require "cosock"` costs and loads (doc/footprint.md): the loop and
-- its functions only; every module loads on first use, through the cosock
-- table (cosock.lazy) or require, and pairs(cosock) on 5.2 and later loads
-- and lists them all. Each check runs in a fresh child process: in the specs'
-- own process every module is loaded already.
local child = require "spec.support.child"
local V = require "spec.support.version"

-- The Lua heap `require "cosock"` adds over LuaSocket, in KB. The goal is
-- half of cosock 0.2.0's in the same program (111 KB on 5.3 here, so 55 KB);
-- this guard is tighter, today's figure (17 KB on 5.3, 16 on 5.4) plus a
-- margin, so that a module loaded eagerly again shows at once.
local BUDGET_KB = 21

local MODULES = { "socket", "channel", "asyncify", "timer", "signal", "when", "op",
                  "ossignal", "stop", "tasks" }

describe("require 'cosock'", function()
  it("adds at most " .. BUDGET_KB .. " KB of Lua heap over LuaSocket (5.3, 5.4)", function()
    if not V.integers then
      print("footprint_spec: heap budget not checked on " .. _VERSION ..
            (V.jit and " (LuaJIT)" or "") .. ": measured on Lua 5.3 and 5.4 only")
      return
    end
    local out = child.run([[
      local function heap() collectgarbage("collect"); collectgarbage("collect"); return collectgarbage("count") end
      require "socket"
      -- Lua's string table doubles when its count of strings passes a power
      -- of two: a load that happened to cross one would be charged the
      -- whole table's growth (4 KB at 1,024 strings), whatever it added
      -- itself. Held strings put the table past that first.
      local hold = {}
      for i = 1, 1500 do hold[i] = "footprint." .. i end
      local before = heap()
      require "cosock"
      io.write(string.format("%.1f", heap() - before))
    ]])
    local kb = tonumber(out)
    assert.is_not_nil(kb, out)
    assert.is_true(kb <= BUDGET_KB, ("require 'cosock' adds %.1f KB, budget %d KB"):format(kb or 0, BUDGET_KB))
  end)

  it("loads none of the modules, and each loads when the cosock table is read", function()
    local out = child.run([[
      local cosock = require "cosock"
      local names = { ]] .. '"' .. table.concat(MODULES, '", "') .. '"' .. [[ }
      local before = {}
      for _, n in ipairs(names) do before[#before + 1] = tostring(package.loaded["cosock." .. n] ~= nil) end
      local after = {}
      for _, n in ipairs(names) do
        local v = cosock[n]
        after[#after + 1] = tostring(v ~= nil and v == package.loaded["cosock." .. n] and rawget(cosock, n) == v)
      end
      io.write(table.concat(before, " "), "|", table.concat(after, " "))
    ]])
    local none = string.rep("false ", #MODULES):sub(1, -2)
    local all = string.rep("true ", #MODULES):sub(1, -2)
    assert.equal(none .. "|" .. all, out)
  end)

  it("keeps cosock.dns unloaded until cosock.socket.dns is read", function()
    local out = child.run([[
      local cosock = require "cosock"
      local s = cosock.socket
      local a = package.loaded["cosock.dns"] ~= nil
      local d = s.dns
      io.write(tostring(a), " ", tostring(d == package.loaded["cosock.dns"] and d ~= nil))
    ]])
    assert.equal("false true", out)
  end)

  it("pairs(cosock) lists cosock 0.2.0's names and the additions (5.2 and later)", function()
    local out = child.run([[
      local seen = {}
      for k, v in pairs(require "cosock") do seen[#seen + 1] = k .. ":" .. type(v) end
      table.sort(seen)
      io.write(table.concat(seen, " "))
    ]])
    if V.puc51 or V.jit then
      -- no __pairs: the fields there are before any module is read
      assert.is_nil(out:find("socket:", 1, true), out)
      assert.truthy(out:find("spawn:function", 1, true), out)
      return
    end
    for _, want in ipairs({ "asyncify:function", "channel:table", "reset:function", "run:function",
                            "socket:table", "spawn:function", "timer:table", "signal:table",
                            "when:table", "op:table", "get_thread_metadata:function" }) do
      assert.truthy(out:find(want, 1, true), want .. " not in " .. out)
    end
    -- the additions cosock.ossignal and cosock.stop: listed once read only
    assert.is_nil(out:find("ossignal:", 1, true), out)
    assert.is_nil(out:find("stop:", 1, true), out)
    local has_luasec = pcall(require, "ssl")
    assert.equal(has_luasec, out:find("ssl:table", 1, true) ~= nil, out)
  end)

  it("pairs(cosock.socket) lists dns, as cosock 0.2.0's does, and not http (5.2 and later)", function()
    local out = child.run([[
      local seen = {}
      for k in pairs(require("cosock").socket) do seen[k] = true end
      io.write(tostring(seen.dns), " ", tostring(seen.http), " ", tostring(seen.tcp))
    ]])
    assert.equal((V.puc51 or V.jit) and "nil nil true" or "true nil true", out)
  end)

  it("adds a C feature to cosock.core once, and names an unknown one", function()
    local out = child.run([[
      local core = require "cosock.core"
      local a = core.channel_new == nil
      core.open "channel"
      local f = core.channel_new
      core.open "channel"
      local ok, err = pcall(core.open, "nope")
      io.write(tostring(a), " ", tostring(f ~= nil and core.channel_new == f), " ", tostring(ok), " ", err)
    ]])
    assert.equal("true true false cosock.core.open: no feature named 'nope'", out)
  end)
end)
