-- A stalled loop: the only task waits on a channel that no one will send on.
-- run prints its state dump to stdout and raises; the error's first line and
-- the dump are compared (addresses, times and library frames masked).
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local _, rx = cosock.channel.new()
cosock.spawn(function()
  rx:receive()
end, "stuck")
R.run("run")
R.show("live tasks after the stall", #cosock.get_thread_metadata())
