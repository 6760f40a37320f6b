-- op_timeout.lua: a request with a timeout, as a choice of operations.
--
-- Shows: op.choice between a reply and op.sleep (the timeout), op:wrap to tell
-- the branches apart, and op.with_nack: the request is made inside with_nack,
-- so when the timeout wins, the server learns that the client gave up (the nack
-- becomes ready) and drops the reply instead of waiting for ever to deliver it.
-- The CML way of Snabb's fibers (their "timeout operations" over timers).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh op_timeout
-- (or: lua5.3 examples/op_timeout.lua with cosock on LUA_PATH/LUA_CPATH)
-- Prints, for three requests taking 0.01 s, 0.3 s and 0.02 s against a 0.1 s
-- timeout:
--   request 1: reply 1 after 0.01 s
--   request 2: timed out
--   request 3: reply 9 after 0.02 s
--   server: the client gave up on request 2
-- (the last line when request 2's 0.3 s are over: the server's answer for it
-- then finds the nack ready and prints instead of waiting to deliver).

local cosock = require "cosock"
local op = require "cosock.op"

local requests_tx, requests_rx = cosock.channel.new()

-- The server: answers n*n after the delay each request asks for, unless the
-- client has given up by then.
local server = cosock.spawn(function()
  while true do
    local req = op.recv(requests_rx):perform()
    if req == nil then return end -- closed
    cosock.spawn(function()
      cosock.socket.sleep(req.delay)
      op.choice(
        op.send(req.reply, req.n * req.n),
        req.gave_up:wrap(function() print("server: the client gave up on request " .. req.n) end)
      ):perform()
    end, "answer " .. req.n)
  end
end, "server")

-- One request as an operation: with_nack runs at each perform; the nack
-- becomes ready if this operation is not the one chosen.
local function request(n, delay)
  return op.with_nack(function(gave_up)
    local reply_tx, reply_rx = cosock.channel.new(0)
    requests_tx:send({ n = n, delay = delay, reply = reply_tx, gave_up = gave_up })
    return op.recv(reply_rx)
  end)
end

cosock.spawn(function()
  for n, delay in ipairs { 0.01, 0.3, 0.02 } do
    local result = op.choice(
      request(n, delay):wrap(function(v) return ("reply %d after %s s"):format(v, delay) end),
      op.sleep(0.1):wrap(function() return "timed out" end)
    ):perform()
    print(("request %d: %s"):format(n, result))
  end
  requests_tx:close()
end, "client")

cosock.run()
assert(not server:is_alive())
