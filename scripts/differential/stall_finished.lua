-- A stalled loop in which one task finished in the last pass: "waiter" is
-- woken by a message, takes it and waits again; the sender ends in the same
-- pass.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"

local tx, rx = cosock.channel.new()
cosock.spawn(function()
  while true do
    local m = rx:receive()
    print("got", m)
  end
end, "waiter")
cosock.spawn(function()
  cosock.socket.sleep(0.01)
  tx:send("one")
end, "sender")
R.run("run")
