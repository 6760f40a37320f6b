-- Runs one of LuaSocket's test files (its test/ directory) on an
-- implementation of `socket`, for scripts/luasocket-tests.sh:
--   lua5.3 run.lua IMPL FILE [--guard]
-- IMPL is luasocket (LuaSocket itself), cosock or native: then the file runs
-- inside a task, with package.loaded.socket = cosock.socket, so its
-- `require "socket"` gets the wrappers (the paths to cosock come from
-- LUA_PATH/LUA_CPATH, which the script sets). The file's text is run as it
-- is, except with --guard (for testclnt.lua): each one-line call from its
-- first top-level `test(...)` on runs under a guard, so that a test that
-- fails (its fail() writes "ERROR: ...!" and calls os.exit) is reported and
-- the next one still runs. The guard writes to the file LS_RESULTS, per call
-- n (counted from 1):
--   start n [section] call          before it runs
--   done n ok | done n FAIL: message
-- With LS_FROM=k the calls before the k-th are not run (the script starts a
-- run again after a call that never returned). os.exit ends the run with the
-- status it was given, after the line "== exit N" (without --guard).
local impl, file, mode = arg[1], arg[2], arg[3]
assert(impl and file, "usage: run.lua luasocket|cosock|native FILE [--guard]")
local luasocket = require "socket"

local real_exit, stderr = os.exit, io.stderr
local EXIT = {}
os.exit = function(code) error(setmetatable({ code = code }, EXIT), 0) end

-- The last "ERROR: ..." the file wrote (its fail()), for the guard's line.
local last_error
io.stderr = setmetatable({}, { __index = function(_, k)
  local v = stderr[k]
  if type(v) ~= "function" then return v end
  if k == "write" then
    return function(_, ...)
      local s = table.concat({ ... })
      if s:find("^ERROR: ") then last_error = s:sub(8) else last_error = last_error and last_error .. s end
      return stderr:write(...)
    end
  end
  return function(_, ...) return v(stderr, ...) end
end })

local f = assert(io.open(file, "r"))
local text = f:read("*a")
f:close()
if mode == "--guard" then
  local lines, started, section = {}, false, ""
  for line in (text:gsub("\r\n", "\n") .. "\n"):gmatch("(.-)\n") do
    if line:match("^test%(") then started = true end
    -- a call alone on its line, or after "if ... then" (the IPv6 variants)
    local head, call = "", started and line:match("^([%a_][%w_]*%s*%b())%s*$")
    if started and not call then head, call = line:match("^(%s*if [^\n]- then )([%a_][%w_]*%s*%b())%s*$") end
    if call and line:match("^test%(") then
      section = line:match("^test%((.*)%)%s*$")
      lines[#lines + 1] = line
    elseif call then
      lines[#lines + 1] = ("%s__guard(%q, %q, function() %s end)"):format(head, section, call, call)
    else
      lines[#lines + 1] = line
    end
  end
  text = table.concat(lines, "\n")
end

local function describe(err)
  if getmetatable(err) == EXIT then return "exit " .. tostring(err.code) end
  return tostring(err)
end

-- The guard: a start and a done line per call, in LS_RESULTS.
local results = mode == "--guard" and assert(io.open(assert(os.getenv("LS_RESULTS"), "LS_RESULTS"), "a"))
local from, count = tonumber(os.getenv("LS_FROM") or "1"), 0
rawset(_G, "__guard", function(section, call, fn)
  count = count + 1
  if count < from then return end
  last_error = nil
  results:write(("start %d [%s] %s\n"):format(count, section, call))
  results:flush()
  local ok, err = pcall(fn)
  local outcome = "ok"
  if not ok then
    local why = last_error and last_error:gsub("!?\n$", "") or describe(err)
    outcome = "FAIL: " .. why:gsub("\n", " ")
  end
  results:write(("done %d %s\n"):format(count, outcome))
  results:flush()
end)

local chunk = assert(load(text, "@" .. file))
local status = 0
local function body()
  local ok, err = pcall(chunk)
  if not ok then
    if getmetatable(err) == EXIT then
      print("== exit " .. tostring(err.code))
      status = err.code == true and 0 or err.code == false and 1 or tonumber(err.code) or 0
    else
      print("== error: " .. tostring(err))
      status = 1
    end
  end
end

if impl == "luasocket" then
  body()
else
  local cosock = require "cosock"
  local socket = cosock.socket
  -- LuaSocket's suite insists on a debug build (socket._DEBUG); neither
  -- cosock's nor cosock-native's socket table copies that field: the harness
  -- gives both the real module's.
  rawset(socket, "_DEBUG", luasocket._DEBUG)
  package.loaded.socket = socket
  cosock.spawn(body, "luasocket-test")
  local ok, err = pcall(cosock.run)
  if not ok then
    print("== run raised: " .. tostring(err))
    status = 1
  end
end
io.stdout:flush()
real_exit(status)
