-- W2 idle, cosock: W1 while 10,000 more tasks are parked, half in receive on
-- cosock channels that never get a message, half in sleep(3600). After the
-- round trips the client releases them all (closes the senders, cancels the
-- sleepers through their handles) and run returns.
-- The same process first runs the plain W1 exchange (run #1, nothing
-- parked), then the parked one (run #2): `rate` is run #2's round trips/s,
-- `base_rate` run #1's, and `ratio` = rate / base_rate, measured seconds
-- apart so that a busy machine moves both alike. wall/cpu/rss are run #2's.
-- Usage: w2_idle.lua [ROUNDS] [IDLE]   (default 20000 10000)
package.path = (arg[0]:match("^(.*/)") or "./") .. "../lib/?.lua;" .. package.path
local B = require "bench"
local cosock = require "cosock"
local socket = cosock.socket

local W, IMPL = "w2", "cosock-native"
local ROUNDS = B.argnum(1, 20000)
local IDLE = B.argnum(2, 10000)

-- Spawns the W1 server and client; `after` runs in the client task at the
-- end. Returns the table the tasks fill in.
local function spawn_pingpong(after)
  local st = { served = 0, answered = 0 }
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()

  cosock.spawn(function()
    local c = assert(server:accept())
    while true do
      local line, err = c:receive("*l")
      if line == nil then
        if err ~= "closed" then error("server receive: " .. tostring(err)) end
        break
      end
      if line ~= "ping" then error("server got " .. tostring(line)) end
      st.served = st.served + 1
      assert(c:send("pong\n"))
    end
    c:close()
    server:close()
  end, "server")

  cosock.spawn(function()
    local c = assert(socket.connect("127.0.0.1", tonumber(port)))
    st.t_first, st.c_first = B.now(), B.cpu()
    for _ = 1, ROUNDS do
      assert(c:send("ping\n"))
      local line, err = c:receive("*l")
      if line ~= "pong" then error("client got " .. tostring(line or err)) end
      st.answered = st.answered + 1
    end
    st.t_last, st.c_last = B.now(), B.cpu()
    c:close()
    if after then after() end
  end, "client")
  return st
end

local function check(st, which)
  if st.served ~= ROUNDS or st.answered ~= ROUNDS then
    B.fail(W, IMPL, ("%s: served=%d answered=%d want %d"):format(which, st.served, st.answered, ROUNDS))
  end
  return ROUNDS / (st.t_last - st.t_first), ROUNDS / (st.c_last - st.c_first)
end

B.guard(W, IMPL, function()
  -- run #1: nothing parked
  local base = spawn_pingpong(nil)
  cosock.run()
  local base_rate, base_cpu_rate = check(base, "run #1")

  -- run #2: IDLE parked tasks
  local n_recv, n_sleep = math.floor(IDLE / 2), IDLE - math.floor(IDLE / 2)
  local senders, sleepers = {}, {}
  local recv_closed, recv_bad, sleep_woke = 0, 0, 0
  for i = 1, n_recv do
    local tx, rx = cosock.channel.new()
    senders[i] = tx
    cosock.spawn(function()
      local msg, err = rx:receive()
      if msg == nil and err == "closed" then recv_closed = recv_closed + 1
      else recv_bad = recv_bad + 1 end
    end, "idle-receiver")
  end
  for i = 1, n_sleep do
    sleepers[i] = cosock.spawn(function()
      socket.sleep(3600)
      sleep_woke = sleep_woke + 1
    end, "idle-sleeper")
  end
  local st = spawn_pingpong(function()
    if recv_closed + recv_bad + sleep_woke ~= 0 then
      error("a parked task ended before it was released")
    end
    for i = 1, n_recv do senders[i]:close() end
    for i = 1, n_sleep do sleepers[i]:cancel() end
  end)

  local t0, c0 = B.now(), B.cpu()
  cosock.run()
  local wall, cpu = B.now() - t0, B.cpu() - c0
  local rate, cpu_rate = check(st, "run #2")
  local alive = 0
  for i = 1, n_sleep do if sleepers[i]:is_alive() then alive = alive + 1 end end
  if recv_closed ~= n_recv or recv_bad ~= 0 or sleep_woke ~= 0 or alive ~= 0 then
    B.fail(W, IMPL, ("released wrong: receivers closed=%d bad=%d, sleepers woke=%d alive=%d")
      :format(recv_closed, recv_bad, sleep_woke, alive))
  end
  B.result(W, IMPL, {
    { "ops", ROUNDS }, { "idle", IDLE }, { "wall", wall }, { "cpu", cpu },
    { "rss_kb", B.rss_kb() }, { "rate", rate }, { "base_rate", base_rate },
    { "ratio", rate / base_rate }, { "cpu_ratio", cpu_rate / base_cpu_rate },
  })
end)
