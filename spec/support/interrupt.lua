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
  local function hook()
    debug.sethook(co)
    jit_on()
    error("interrupt", 0)
  end
  if co then debug.sethook(co, hook, "", n) else debug.sethook(hook, "", n) end
end

function M.off()
  local co = coroutine.running()
  if co then debug.sethook(co) else debug.sethook() end
  jit_on()
end

-- pcall(fn) with the interrupt armed for the n-th instruction from here.
function M.pcall(n, fn)
  local ok, err = pcall(function()
    M.after(n)
    local r = fn()
    M.off()
    return r
  end)
  M.off()
  return ok, err
end

return M
