-- An error raised in the running coroutine at its n-th Lua instruction from
-- now, once: what the watchdog's "error" action does to a task that ran too
-- long, at a place a test chooses. (LuaJIT: the JIT is off while it is armed,
-- since compiled code runs no count hooks.)

local M = {}
local unpack = table.unpack or unpack

local jit_off = rawget(_G, "jit") and jit.off or function() end
local jit_on = rawget(_G, "jit") and jit.on or function() end

function M.after(n)
  local co = coroutine.running()
  jit_off()
  local left = n
  local function hook()
    -- (LuaJIT's hooks are global: only co's instructions count)
    if coroutine.running() ~= co then return end
    left = left - 1
    if left > 0 then return end
    if co then debug.sethook(co) else debug.sethook() end
    jit_on()
    -- (none in this file's own code: after fn returned, it is too late)
    if debug.getinfo(2, "S").source:find("support/interrupt", 1, true) then return end
    error("interrupt", 0)
  end
  if co then debug.sethook(co, hook, "", 1) else debug.sethook(hook, "", 1) end
end

function M.off()
  local co = coroutine.running()
  if co then debug.sethook(co) else debug.sethook() end
  jit_on()
end

-- pcall(fn) with the interrupt armed for the n-th instruction from here; a
-- pcall a task may wait in (cosock.compat's), also on PUC Lua 5.1.
function M.pcall(n, fn)
  local ok, err = require("cosock.compat").pcall(function()
    M.after(n)
    local r = fn()
    M.off()
    return r
  end)
  M.off()
  return ok, err
end

return M
