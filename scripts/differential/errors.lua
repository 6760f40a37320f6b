-- Errors out of run: a task raising a string, a number, a table, nil; what
-- run raises (first line, type), and that the loop carries on afterwards.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local function case(label, fn)
  cosock.spawn(fn, label)
  local ok, e = pcall(cosock.run)
  if ok then
    print(label .. ": run returned")
  elseif type(e) == "string" then
    print(label .. ": run raised string: " .. R.first_line(e))
    print(label .. ": has a traceback: " .. tostring(e:find("stack traceback:", 1, true) ~= nil))
  else
    print(label .. ": run raised " .. R.describe(e) .. (type(e) == "table" and (" [1]=" .. R.describe(e[1])) or ""))
  end
  cosock.reset()
end

case("string", function() error("boom") end)
case("string level 0", function() error("plain", 0) end)
case("string after a yield", function() cosock.socket.sleep(0) error("later") end)
case("number", function() error(42) end)
case("table", function() error({ "tbl" }) end)
case("nil", function() error() end)
case("runtime", function() local x = nil; return x.y end)
case("try outside protect", function() cosock.socket.try(nil, "tried") end)

-- a failed task does not take the others down with it
cosock.spawn(function() cosock.socket.sleep(0.01) print("survivor ran") end, "survivor")
cosock.spawn(function() error("first") end, "failing")
R.run("run with a failing task")
R.run("run again")
