-- cosock.channel: new, send, receive, close, settimeout, setwaker, select over
-- a receiver; each call's values with their count and types, and the order in
-- which messages arrive.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local channel = cosock.channel
local socket = cosock.socket

R.call("new", function()
  local a, b = channel.new()
  return type(a), type(b), select("#", channel.new())
end)

local tx, rx = channel.new()
R.call("send", tx.send, tx, "one")
R.call("send nil", tx.send, tx, nil)
R.call("send table", tx.send, tx, { 1 })
R.call("send number", tx.send, tx, 3)
R.call("queue length", function() return #tx.link.queue end)
R.call("settimeout", rx.settimeout, rx, 1)
R.call("settimeout nil", rx.settimeout, rx, nil)
R.call("settimeout string", rx.settimeout, rx, "2")

cosock.spawn(function()
  R.call("receive 1", rx.receive, rx)
  R.call("receive 2", rx.receive, rx)
  R.call("receive 3", function() local m = rx:receive() return type(m), m[1] end)
  R.call("receive 4", rx.receive, rx)
  rx:settimeout(0)
  R.call("receive empty, timeout 0", rx.receive, rx)
  rx:settimeout(-1)
  R.call("receive empty, timeout -1", rx.receive, rx)
  rx:settimeout(0.02)
  R.call("receive empty, timeout 0.02", rx.receive, rx)
  rx:settimeout(nil)
  R.call("receive sent later", rx.receive, rx)
  R.call("select on a receiver", function()
    local r, s, e = socket.select({ rx }, nil, 1)
    return type(r), r and #r, r and r[1] == rx, s, e
  end)
  R.call("receive after select", rx.receive, rx)
  R.call("select timeout", socket.select, { rx }, nil, 0.01)
  R.call("select timeout 0", socket.select, { rx }, nil, 0)
  R.call("select timeout -1", socket.select, { rx }, nil, -1)
  R.call("receive after close", rx.receive, rx)
  R.call("receive after close again", rx.receive, rx)
  R.call("send after close", tx.send, tx, "late")
end, "receiver")

cosock.spawn(function()
  for _ = 1, 8 do socket.sleep(0) end
  socket.sleep(0.05)
  R.call("send while waited", tx.send, tx, "later")
  socket.sleep(0.01)
  R.call("send for select", tx.send, tx, "selected")
  socket.sleep(0.05)
  R.call("send before close", tx.send, tx, "last")
  R.call("sender close", tx.close, tx)
  R.call("sender close again", tx.close, tx)
end, "sender")
R.run("run")

-- receiver:close wakes nobody in cosock; here nobody waits
local tx2, rx2 = channel.new()
R.call("receiver close", rx2.close, rx2)
R.call("send after receiver close", tx2.send, tx2, "x")
cosock.spawn(function() R.call("receive after receiver close", rx2.receive, rx2) end, "r2")
R.run("run 2")

-- setwaker by hand
local tx3, rx3 = channel.new()
local calls = 0
R.call("setwaker", rx3.setwaker, rx3, "recvr", function() calls = calls + 1 end)
R.call("setwaker again", rx3.setwaker, rx3, "recvr", function() end)
R.call("setwaker sendr", rx3.setwaker, rx3, "sendr", function() end)
R.call("send with a waker", tx3.send, tx3, 1)
R.show("waker calls", calls)
R.call("send again with a waker", tx3.send, tx3, 2)
R.show("waker calls", calls)
R.call("setwaker nil", rx3.setwaker, rx3, "recvr", nil)
R.call("setwaker while queued", rx3.setwaker, rx3, "recvr", function() calls = calls + 100 end)
R.show("waker calls", calls)
R.call("sender setwaker", function() return tx3.setwaker end)

-- two tasks waiting on one receiver
local _, rx4 = channel.new()
cosock.spawn(function() rx4:receive() end, "first")
cosock.spawn(function() socket.sleep(0.01) rx4:receive() end, "second")
R.run("two receivers")
