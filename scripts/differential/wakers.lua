-- The waker protocol on socket wrappers: setwaker/_wake by hand (values,
-- errors), and two tasks waiting on one socket for the same kind.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

for _, make in ipairs { "tcp", "udp" } do
  local s = socket[make]()
  local calls = 0
  R.call(make .. " setwaker", s.setwaker, s, "recvr", function() calls = calls + 1 end)
  R.call(make .. " setwaker again", s.setwaker, s, "recvr", function() end)
  R.call(make .. " setwaker bad kind", s.setwaker, s, "other", function() end)
  R.call(make .. " _wake recvr", s._wake, s, "recvr")
  R.show(make .. " calls", calls)
  R.call(make .. " _wake recvr again", s._wake, s, "recvr")
  R.show(make .. " calls", calls)
  R.call(make .. " _wake sendr (none set)", s._wake, s, "sendr")
  R.call(make .. " setwaker nil", s.setwaker, s, "recvr", nil)
  R.call(make .. " setwaker sendr", s.setwaker, s, "sendr", function() calls = calls + 10 end)
  R.call(make .. " _wake sendr", s._wake, s, "sendr")
  R.show(make .. " calls", calls)
  s:close()
end

-- two tasks receiving on one socket
local srv, port = R.listen()
local c = socket.tcp()
cosock.spawn(function()
  c:settimeout(1)
  assert(c:connect("127.0.0.1", port))
  local s = srv:accept()
  cosock.spawn(function() R.call("first receive", c.receive, c) end, "first")
  cosock.spawn(function() socket.sleep(0.01) R.call("second receive", c.receive, c) end, "second")
  socket.sleep(0.1)
  s:send("x\n")
  s:close()
end, "setup")
R.run("run")
c:close()
srv:close()
