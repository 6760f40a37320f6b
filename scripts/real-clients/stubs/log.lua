-- Stub of the hub's log module: each call is one transcript line, so what the
-- third-party code logs (its errors above all) is compared too.
local log = {}
local function emit(level)
  return function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    print("log." .. level .. ": " .. table.concat(t, " ", 1, t.n))
  end
end
for _, level in ipairs({ "trace", "debug", "info", "warn", "error", "fatal", "print" }) do
  log[level] = emit(level)
  -- The *_with variants take an options table ({hub_logs = true}) first.
  log[level .. "_with"] = function(_, ...) return log[level](...) end
end
log.log = function(_, level, ...) return (log[level] or log.print)(...) end
return log
