-- report.lua: how the differential programs print what they observe, the same
-- way on cosock and on cosock-native, so that scripts/differential.sh can diff
-- the two outputs line by line.
--
--   local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
--   R.show("label", ...)        the count of values and each value with its type
--                               (math.type for numbers)
--   R.call("label", f, ...)     pcall(f, ...): its values as show prints them, or
--                               "error: " and the error's first line
--   R.run("label")              pcall(cosock.run), reported like call
--   R.task(name, fn)            cosock.spawn(fn, name), then a report of an error
--                               fn raised instead of an error out of run
--   R.listen()                  a listening cosock tcp wrapper on 127.0.0.1 and its port
--
-- Values that differ from run to run (ports, times, addresses) must not be
-- printed as they are: show prints only the type of a number whose label says
-- so (R.kind), and the script masks addresses.

local R = {}

-- Line by line, so that a program killed by the script's time limit still
-- shows how far it got.
io.stdout:setvbuf("line")

local function first_line(s)
  s = tostring(s)
  return (s:match("^[^\n]*"))
end
R.first_line = first_line

-- One value: numbers with their subtype, strings quoted, others by type (with
-- the class of a socket wrapper, which programs compare).
local function describe(v)
  local t = type(v)
  if t == "number" then
    return math.type(v) .. " " .. string.format(math.type(v) == "float" and "%.14g" or "%d", v)
  elseif t == "string" then
    if #v > 60 then return string.format("string(%d) %q...", #v, v:sub(1, 40)) end
    return string.format("%q", v)
  elseif t == "table" and rawget(v, "inner_sock") ~= nil then
    return "wrapper " .. tostring(rawget(v, "class"))
  elseif t == "nil" or t == "boolean" then
    return tostring(v)
  end
  return t
end
R.describe = describe

local function line(label, n, ...)
  local parts = {}
  for i = 1, n do parts[i] = describe((select(i, ...))) end
  print(label .. ": " .. n .. (n > 0 and " | " .. table.concat(parts, ", ") or ""))
end

function R.show(label, ...)
  line(label, select("#", ...), ...)
end

--- kind(v): the type of v only (for ports, times, durations).
function R.kind(v)
  if type(v) == "number" then return math.type(v) end
  return type(v)
end

--- showkinds(label, ...): like show, but each value by its type only.
function R.showkinds(label, ...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = R.kind((select(i, ...))) end
  print(label .. ": " .. n .. (n > 0 and " | " .. table.concat(parts, ", ") or ""))
end

local function reported(label, ok, ...)
  if ok then
    R.show(label, ...)
  else
    local e = ...
    if type(e) == "string" or type(e) == "number" then
      print(label .. ": error: " .. first_line(e))
    else
      print(label .. ": error object: " .. describe(e))
    end
  end
  return ok, ...
end

function R.call(label, f, ...)
  return reported(label, pcall(f, ...))
end

function R.run(label)
  local cosock = require "cosock"
  return reported(label or "run", pcall(cosock.run))
end

function R.task(name, fn)
  local cosock = require "cosock"
  return cosock.spawn(function(...)
    local ok, e = pcall(fn, ...)
    if not ok then print(name .. ": task error: " .. first_line(e)) end
  end, name)
end

function R.listen()
  local socket = require("cosock").socket
  local srv = assert(socket.tcp())
  assert(srv:bind("127.0.0.1", 0))
  assert(srv:listen(16))
  local _, port = srv:getsockname()
  return srv, port
end

return R
