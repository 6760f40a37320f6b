-- A stalled loop whose tasks parked in different passes: "early" parks on a
-- channel in the first pass; "late" sleeps first and parks on another channel
-- in the last pass, so the dump lists it as woken and "early" as not woken.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local _, rx1 = cosock.channel.new()
local _, rx2 = cosock.channel.new()
cosock.spawn(function() rx1:receive() end, "early")
cosock.spawn(function()
  cosock.socket.sleep(0.01)
  cosock.socket.select({ rx2 }, nil, nil)
end)
R.run("run")
