-- The prime sieve of the Snabb fibers seed on cosock.op (examples/op_sieve.lua):
-- a counting task and one filtering task per prime, all joined by rendezvous
-- channels (capacity 0), every hand-over a send perform meeting a recv perform.
-- Finds the N-th prime (7919 for 1,000) and reports the rate of hand-overs.
-- plain: the same sieve with the channels' own tx:send / rx:receive (the
-- baseline the op_sieve row is compared with).
-- Usage: op_sieve.lua [N] [op|plain]   (default 1000 op)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local op = require "cosock.op"

local IMPL = "cosock-native"
local N = B.argnum(1, 1000)
local PLAIN = arg[2] == "plain"
local W = (PLAIN and "op_sieve_plain" or "op_sieve") .. (N == 1000 and "" or ("_" .. N))
local function send(tx, v)
  if PLAIN then return tx:send(v) end
  return op.send(tx, v):perform()
end
local function recv(rx)
  if PLAIN then return rx:receive() end
  return op.recv(rx):perform()
end

B.guard(W, IMPL, function()
  local tasks, handovers, last = {}, 0, nil
  local function spawn(fn, name) tasks[#tasks + 1] = cosock.spawn(fn, name) end

  local function integers_from(n)
    local tx, rx = cosock.channel.new(0)
    spawn(function()
      while true do
        send(tx, n)
        n = n + 1
      end
    end, "integers")
    return rx
  end

  local function sieve(p, rx)
    local tx, out = cosock.channel.new(0)
    spawn(function()
      while true do
        local n = recv(rx)
        handovers = handovers + 1
        if n % p ~= 0 then send(tx, n) end
      end
    end, "sieve")
    return out
  end

  cosock.spawn(function()
    local rx = integers_from(2)
    for _ = 1, N do
      last = recv(rx)
      handovers = handovers + 1
      rx = sieve(last, rx)
    end
    for _, h in ipairs(tasks) do h:cancel() end
  end, "primes")

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if N == 1000 and last ~= 7919 then B.fail(W, IMPL, "the 1000th prime is not " .. tostring(last)) end
  B.result(W, IMPL, {
    { "ops", handovers }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", handovers / wall }, { "ns_per_msg", wall / handovers * 1e9 }, { "prime", last },
  })
end)
