-- socket.select and socket.sleep: values and counts for timeouts that are
-- positive, zero, negative, integer, float, a numeric string; sleep without a
-- number; the order in which sleeping tasks wake.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

cosock.spawn(function()
  R.call("select 0.01", socket.select, nil, nil, 0.01)
  R.call("select 0", socket.select, nil, nil, 0)
  R.call("select -1", socket.select, nil, nil, -1)
  R.call("select -0.5", socket.select, {}, {}, -0.5)
  R.call("select integer 0", socket.select, {}, nil, 0)
  R.call("select '0.01'", socket.select, nil, nil, "0.01")
  R.call("sleep 0.01", socket.sleep, 0.01)
  R.call("sleep 0", socket.sleep, 0)
  R.call("sleep -1", socket.sleep, -1)
  R.call("sleep '0'", socket.sleep, "0")
end, "selector")
R.run("run")

-- wake order of sleepers (distinct deadlines)
local order = {}
for i, t in ipairs { 0.04, 0.01, 0.03, 0.02 } do
  cosock.spawn(function()
    socket.sleep(t)
    order[#order + 1] = i
  end, "sleeper" .. i)
end
R.run("run sleepers")
R.show("wake order", table.concat(order, ","))

-- sleep(nil) waits without a limit: here another task's channel never comes,
-- so the loop stalls (the dump goes to stdout)
cosock.spawn(function() R.call("sleep()", socket.sleep) end, "nil-sleeper")
local ok, e = pcall(cosock.run)
R.show("run after sleep()", ok, ok or R.first_line(e):match("cosock tried to call socket.select") ~= nil)
