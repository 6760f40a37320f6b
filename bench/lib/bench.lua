-- Shared helpers for the benchmark programs (all implementations).
-- Measurement only: nothing here touches the scheduler under test.
local gettime = require("socket").gettime

local M = {}

M.now = gettime          -- wall clock, seconds (LuaSocket)
M.cpu = os.clock         -- CPU time of this process, user+sys, seconds

-- Peak resident set size of this process in kB (VmHWM), or -1.
function M.rss_kb()
  local f = io.open("/proc/self/status", "r")
  if not f then return -1 end
  local text = f:read("*a")
  f:close()
  return tonumber(text:match("VmHWM:%s*(%d+)")) or -1
end

-- Resident set size of this process now, in bytes (VmRSS), or -1.
function M.rss_now()
  local f = io.open("/proc/self/status", "r")
  if not f then return -1 end
  local text = f:read("*a")
  f:close()
  return (tonumber(text:match("VmRSS:%s*(%d+)")) or -1) * 1024
end

-- Lua heap in bytes after two full collections (what stays reachable).
function M.heap_now()
  collectgarbage()
  collectgarbage()
  return collectgarbage("count") * 1024
end

-- Positional argument i as a number, or the default.
function M.argnum(i, default)
  local v = arg and arg[i]
  return (v and tonumber(v)) or default
end

-- A small deterministic generator so that every implementation sees the
-- very same sequence whatever the C library does: Park and Miller's minimal
-- standard (multiplier 48271, modulus 2^31 - 1), exact in a double, so the
-- same on every Lua (5.1 has no integers).
function M.rng(seed)
  local state = seed % 2147483647
  if state == 0 then state = 1 end
  return function()
    state = state * 48271 % 2147483647
    return (state - 1) / 2147483646
  end
end

local function fmt(v)
  if type(v) == "number" and v ~= math.floor(v) then
    if v >= 1e5 or v <= -1e5 then return string.format("%.0f", v) end
    return string.format("%.6g", v)
  end
  return tostring(v)
end

-- Print the one machine-readable line. fields is a list of {key, value}.
function M.result(workload, impl, fields)
  local parts = { "RESULT", workload, "impl=" .. impl }
  for _, kv in ipairs(fields) do
    parts[#parts + 1] = kv[1] .. "=" .. fmt(kv[2])
  end
  print(table.concat(parts, " "))
  io.stdout:flush()
end

-- Print FAIL instead of figures and end the process with status 1.
function M.fail(workload, impl, why)
  print(string.format("FAIL %s impl=%s %s", workload, impl, tostring(why)))
  io.stdout:flush()
  os.exit(1)
end

-- The end of an exchange workload (churn, the floor programs): FAIL unless both
-- sides counted want, else the figures, the rate being want per wall second.
function M.exchange_done(workload, impl, want, served, answered, wall, cpu)
  if served ~= want or answered ~= want then
    M.fail(workload, impl, ("served=%d answered=%d want %d"):format(served, answered, want))
  end
  M.result(workload, impl, {
    { "ops", want }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", M.rss_kb() },
    { "rate", want / wall },
  })
end

-- Run fn(); any Lua error becomes a FAIL line.
function M.guard(workload, impl, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    M.fail(workload, impl, "error: " .. tostring(err):gsub("\n", " | "))
  end
end

-- The command line that started this interpreter (for a child process).
function M.interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  local parts = {}
  for j = i, -1 do parts[#parts + 1] = string.format("%q", arg[j]) end
  return table.concat(parts, " ")
end

-- Start this same script again in a child process with the given extra
-- arguments; its standard output can be read once the caller is done.
function M.start_self(...)
  local cmd = { "exec", M.interpreter(), string.format("%q", arg[0]) }
  for _, a in ipairs({ ... }) do cmd[#cmd + 1] = string.format("%q", tostring(a)) end
  return assert(io.popen(table.concat(cmd, " "), "r"))
end

-- Read what a child started by start_self printed; returns the key=value
-- fields of its "CHILD" line, or nil and everything it printed.
function M.finish_child(f)
  local out = f:read("*a") or ""
  f:close()
  local line = out:match("CHILD[^\n]*")
  if not line then return nil, (out:gsub("\n", " | ")) end
  local t = {}
  for k, v in line:gmatch("(%w+)=(%S+)") do t[k] = tonumber(v) or v end
  return t
end

-- A child's report: one "CHILD key=value ..." line.
function M.child_report(fields)
  local parts = { "CHILD" }
  for _, kv in ipairs(fields) do parts[#parts + 1] = kv[1] .. "=" .. fmt(kv[2]) end
  print(table.concat(parts, " "))
  io.stdout:flush()
end

return M
