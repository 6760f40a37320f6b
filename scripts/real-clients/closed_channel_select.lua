-- closed_channel_select: the smallest program in the shape of the issue's
-- report (the hub's device-thread library is not public): a task selects over
-- a channel receiver three times and another task closes the sender.
-- needs: nothing (cosock only)
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
local cosock = require "cosock"

local tx, rx = cosock.channel.new()
H.task("selector", function()
  for i = 1, 3 do
    local r = cosock.socket.select({ rx }, {})
    H.say(i, #r, rx:receive())
  end
end)
H.task("closer", function() tx:close() end)
H.run()
