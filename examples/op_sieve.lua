-- op_sieve.lua: the prime sieve of Snabb's fibers, on cosock.op.
--
-- Shows: cosock.op's send and recv operations over rendezvous channels
-- (cosock.channel.new(0)), CML's synchronous channels. One task counts up
-- from 2; each prime found adds a task that filters its multiples out of the
-- stream; every hand-over is a rendezvous between two performs. Once enough
-- primes are printed, the counting and filtering tasks are cancelled (each is
-- waiting in a perform; a cancelled send takes its message back out of line).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh op_sieve [N]
-- (or: lua5.3 examples/op_sieve.lua [N] with cosock on LUA_PATH/LUA_CPATH)
-- Prints the first N primes (default 20), one per line: 2, 3, 5, 7, 11, ...
-- 71, then "N primes, N+1 tasks cancelled" (the counter and a filter per
-- prime). The 1,000th prime, 7919, is the last number of `op_sieve 1000`.

local cosock = require "cosock"
local op = require "cosock.op"

local count = tonumber((...)) or 20
local tasks = {}

local function spawn(fn, name)
  tasks[#tasks + 1] = cosock.spawn(fn, name)
end

-- A stream of n, n+1, n+2, ... on a new rendezvous channel.
local function integers_from(n)
  local tx, rx = cosock.channel.new(0)
  spawn(function()
    while true do
      op.send(tx, n):perform()
      n = n + 1
    end
  end, "integers")
  return rx
end

-- The stream from rx without the multiples of p.
local function sieve(p, rx)
  local tx, out = cosock.channel.new(0)
  spawn(function()
    while true do
      local n = op.recv(rx):perform()
      if n % p ~= 0 then op.send(tx, n):perform() end
    end
  end, "sieve " .. p)
  return out
end

cosock.spawn(function()
  local rx = integers_from(2)
  for _ = 1, count do
    local p = op.recv(rx):perform()
    print(p)
    rx = sieve(p, rx)
  end
  local cancelled = 0
  for _, h in ipairs(tasks) do
    if h:is_alive() then
      h:cancel()
      cancelled = cancelled + 1
    end
  end
  print(("%d primes, %d tasks cancelled"):format(count, cancelled))
end, "primes")

cosock.run()
