-- cosock.op choice, cosock: N messages from one producer task to one consumer
-- task over K unbounded channels (message i on channel (i-1) % K + 1; the
-- producer yields one pass after every BATCH sends, as W5 does).
--   plain:  K = 1, the consumer calls rx:receive() (the baseline)
--   choice: the consumer performs op.choice(op.recv(rx1), ..., op.recv(rxK)),
--           made once: each perform tries the receivers in order and, when all
--           are empty, waits on all K in one select.
-- Usage: op_choice.lua [plain|choice] [K] [N] [BATCH]   (default choice 2 200000 100)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local op = require "cosock.op"

local IMPL = "cosock-native"
local MODE = arg[1] or "choice"
local K = B.argnum(2, 2)
local N = B.argnum(3, 200000)
local BATCH = B.argnum(4, 100)
if MODE == "plain" then K = 1 end
local W = MODE == "plain" and "op_receive" or ("op_choice" .. K)

B.guard(W, IMPL, function()
  local txs, rxs, recvs = {}, {}, {}
  for k = 1, K do
    txs[k], rxs[k] = cosock.channel.new()
    recvs[k] = op.recv(rxs[k])
  end
  local choice = op.choice((table.unpack or unpack)(recvs))
  local got, sum, bad = 0, 0, nil

  -- (a choice drains its first channel first: the order across channels is
  -- not the sending order, so the check is the count and the sum)
  cosock.spawn(function()
    local rx = rxs[1]
    for _ = 1, N do
      local msg
      if MODE == "plain" then msg = rx:receive() else msg = choice:perform() end
      got = got + 1
      sum = sum + msg
    end
    if sum ~= N * (N + 1) / 2 then bad = "the messages' sum is " .. sum end
  end, "consumer")

  cosock.spawn(function()
    local sleep = cosock.socket.sleep
    for i = 1, N do
      txs[(i - 1) % K + 1]:send(i)
      if i % BATCH == 0 then sleep(0) end
    end
  end, "producer")

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if bad then B.fail(W, IMPL, bad) end
  if got ~= N then B.fail(W, IMPL, ("received %d messages, want %d"):format(got, N)) end
  B.result(W, IMPL, {
    { "ops", N }, { "wall", wall }, { "cpu", cpu }, { "rss_kb", B.rss_kb() },
    { "rate", N / wall }, { "ns_per_msg", wall / N * 1e9 },
  })
end)
