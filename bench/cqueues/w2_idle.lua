-- W2 idle, cqueues: W1 while 10,000 more coroutines are parked (half
-- waiting on channels that never get a message, half in a one-hour sleep),
-- then all of them are released and the loop returns.
-- cqueues cannot cancel a coroutine from outside, so a "sleeper" here waits
-- on its own condition with a 3600 s timeout (cqueues.poll(cond, 3600)) and
-- cancelling it means signalling that condition; it then returns at once.
-- As in the cosock program, the plain exchange runs first in the same
-- process (loop #1) and gives `base_rate`; `ratio` = rate / base_rate.
-- Usage: w2_idle.lua [ROUNDS] [IDLE]   (default 20000 10000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cqueues = require "cqueues"
local csock = require "cqueues.socket"
local condition = require "cqueues.condition"
local channel = require "cq_channel"

local W, IMPL = "w2", "cqueues"
local ROUNDS = B.argnum(1, 20000)
local IDLE = B.argnum(2, 10000)

local function wrap_pingpong(cq, after)
  local st = { served = 0, answered = 0 }
  local srv = csock.listen("127.0.0.1", 0)
  assert(srv:listen())
  local _, _, port = srv:localname()

  cq:wrap(function()
    local c = assert(srv:accept())
    while true do
      local line = c:read("*l")
      if line == nil then break end
      if line ~= "ping" then error("server got " .. tostring(line)) end
      st.served = st.served + 1
      assert(c:write("pong\n"))
    end
    c:close()
    srv:close()
  end)

  cq:wrap(function()
    local c = assert(csock.connect("127.0.0.1", port))
    st.t_first, st.c_first = B.now(), B.cpu()
    for _ = 1, ROUNDS do
      assert(c:write("ping\n"))
      local line = c:read("*l")
      if line ~= "pong" then error("client got " .. tostring(line)) end
      st.answered = st.answered + 1
    end
    st.t_last, st.c_last = B.now(), B.cpu()
    c:close()
    if after then after() end
  end)
  return st
end

local function check(st, which)
  if st.served ~= ROUNDS or st.answered ~= ROUNDS then
    B.fail(W, IMPL, ("%s: served=%d answered=%d want %d"):format(which, st.served, st.answered, ROUNDS))
  end
  return ROUNDS / (st.t_last - st.t_first), ROUNDS / (st.c_last - st.c_first)
end

B.guard(W, IMPL, function()
  local cq = cqueues.new()

  -- loop #1: nothing parked
  local base = wrap_pingpong(cq, nil)
  local ok, err = cq:loop()
  if not ok then B.fail(W, IMPL, err) end
  local base_rate, base_cpu_rate = check(base, "loop #1")

  -- loop #2: IDLE parked coroutines
  local n_recv, n_sleep = math.floor(IDLE / 2), IDLE - math.floor(IDLE / 2)
  local senders, cancels = {}, {}
  local recv_closed, recv_bad, sleep_cancelled, sleep_bad = 0, 0, 0, 0
  for i = 1, n_recv do
    local ch = channel.new()
    senders[i] = ch
    cq:wrap(function()
      local msg, e = ch:receive()
      if msg == nil and e == "closed" then recv_closed = recv_closed + 1
      else recv_bad = recv_bad + 1 end
    end)
  end
  for i = 1, n_sleep do
    local slot = { cond = condition.new(), cancelled = false }
    cancels[i] = slot
    cq:wrap(function()
      cqueues.poll(slot.cond, 3600)
      if slot.cancelled then sleep_cancelled = sleep_cancelled + 1
      else sleep_bad = sleep_bad + 1 end
    end)
  end
  local st = wrap_pingpong(cq, function()
    if recv_closed + recv_bad + sleep_cancelled + sleep_bad ~= 0 then
      error("a parked coroutine ended before it was released")
    end
    for i = 1, n_recv do senders[i]:close() end
    for i = 1, n_sleep do
      cancels[i].cancelled = true
      cancels[i].cond:signal()
    end
  end)

  local t0, c0 = B.now(), B.cpu()
  ok, err = cq:loop()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  if not ok then B.fail(W, IMPL, err) end
  local rate, cpu_rate = check(st, "loop #2")
  if recv_closed ~= n_recv or recv_bad ~= 0 or sleep_cancelled ~= n_sleep or sleep_bad ~= 0 then
    B.fail(W, IMPL, ("released wrong: recv closed=%d bad=%d, sleepers cancelled=%d bad=%d")
      :format(recv_closed, recv_bad, sleep_cancelled, sleep_bad))
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "idle", IDLE }, { "wall", wall }, { "cpu", cpu },
    { "rss_kb", B.rss_kb() }, { "rate", rate }, { "base_rate", base_rate },
    { "ratio", rate / base_rate }, { "cpu_ratio", cpu_rate / base_cpu_rate },
  })
end)
