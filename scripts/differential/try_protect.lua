-- socket.try / newtry / protect, in and out of a task, with yields inside the
-- protected function: values, counts, error objects, re-raised errors and
-- their position prefix.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket
local try, newtry, protect = socket.try, socket.newtry, socket.protect

R.call("try(1, 2, 3)", try, 1, 2, 3)
R.call("try(false, 'm')", try, false, "m")
R.call("try()", function() return try() end)
R.call("try(nil, 'msg') raw", function()
  local ok, e = pcall(try, nil, "msg")
  return ok, type(e), type(e) == "table" and e[1], type(getmetatable(e)), tostring(e):match("^table:") ~= nil
end)
R.call("protect ok", protect(function(a, b) return a, b, nil end), 1, 2)
R.call("protect try nil msg", protect(function() try(nil, "msg") end))
R.call("protect try nil", protect(function() try(nil) end))
R.call("protect try nil number", protect(function() try(nil, 5) end))
R.call("protect try false", protect(function() return try(false, "m") end))
R.call("protect error string", protect(function() error("boom") end))
R.call("protect error string level 0", protect(function() error("flat", 0) end))
R.call("protect error table", protect(function() error({ "t" }) end))
R.call("protect error nil", protect(function() error() end))
R.call("protect runtime", protect(function() local x; return x.y end))
R.call("protect nested", protect(function()
  return protect(function() try(nil, "inner") end)()
end))
R.call("protect non-function", function() return protect(42)() end)

local log = {}
local t1 = newtry(function() log[#log + 1] = "finalized" end)
R.call("newtry finalizer", protect(function() t1(nil, "x") end))
R.show("finalizer log", table.concat(log, ","))
R.call("newtry ok no finalizer call", t1, 1)
R.show("finalizer log", table.concat(log, ","))
R.call("newtry non-function", protect(function() newtry(42)(nil, "y") end))
R.call("newtry table finalizer", protect(function() newtry({})(nil, "z") end))
R.call("newtry erroring finalizer", protect(function() newtry(function() error("fin") end)(nil, "w") end))

-- the same inside a task, yielding inside the protected function
cosock.spawn(function()
  R.call("task protect ok after yield", protect(function(a)
    socket.sleep(0)
    return a, "after"
  end), "in")
  R.call("task protect try after yield", protect(function()
    socket.sleep(0.001)
    try(nil, "late")
  end))
  R.call("task protect error after yield", protect(function()
    socket.sleep(0)
    error("late boom")
  end))
  local tx, rx = cosock.channel.new()
  cosock.spawn(function() socket.sleep(0.01) tx:send("msg") end, "feeder")
  R.call("task protect channel receive", protect(function()
    return try(rx:receive())
  end))
  rx:settimeout(0)
  R.call("task protect channel timeout", protect(function()
    return try(rx:receive())
  end))
  -- an error not from try goes up from the task
  protect(function() socket.sleep(0) error("escapes") end)()
end, "protected")
R.run("run")
