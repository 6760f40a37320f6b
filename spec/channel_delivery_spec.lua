-- A message is never lost or duplicated: many senders sharing bounded and
-- rendezvous channels, with timeouts, cancels and a receiver that pauses at
-- random. Every send that returned true is received exactly once, in the
-- order of each sender's sends; no send that failed is ever received.

local cosock = require "cosock"
local net = require "spec.support.net"

local channel = cosock.channel
local socket = cosock.socket

-- A small deterministic generator: the same run every time, on every Lua.
-- (s * 1103515245 is split in two so that every product is exact in a
-- double: 1103515245 = 16838 * 65536 + 20077.)
local function rng(seed)
  local s = seed
  return function(n)
    s = (s * 20077 + (s * 16838 % 32768) * 65536 + 12345) % 2147483648
    return s % n
  end
end

local function stress(capacity, seed)
  local rand = rng(seed)
  local result = {}   -- message -> "sent" | "timeout" | "closed" | nil (no answer yet)
  local received = {} -- message -> times received
  local order = {}    -- sender -> last sequence number received
  local bad = {}
  local handles = {}
  cosock.spawn(function()
    local tx, rx = channel.new(capacity)
    rx:settimeout(net.TIMEOUT)
    for s = 1, 6 do
      handles[s] = cosock.spawn(function()
        for i = 1, 40 do
          local msg = s * 1000 + i
          -- a short timeout now and then (the timeout is the shared sender's:
          -- a send reads it when it starts)
          tx:settimeout(rand(4) == 0 and 0.001 * rand(3) or net.TIMEOUT)
          local ok, err = tx:send(msg)
          result[msg] = ok and "sent" or err
          if rand(3) == 0 then socket.sleep(0) end
        end
      end, "sender " .. s)
    end
    cosock.spawn(function()
      socket.sleep(0.01)
      handles[2]:cancel()
      handles[5]:cancel()
    end, "canceller")
    local n = 0
    while true do
      local m = rx:receive()
      if m == nil then break end
      received[m] = (received[m] or 0) + 1
      local s, i = math.floor(m / 1000), m % 1000
      if (order[s] or 0) >= i then bad[#bad + 1] = ("message %d after %d"):format(m, order[s]) end
      order[s] = i
      n = n + 1
      if rand(4) == 0 then socket.sleep(0.001 * rand(2)) end
      if n == 60 then
        -- after a while, stop receiving once the senders are done
        cosock.spawn(function()
          while handles[1]:is_alive() or handles[3]:is_alive() or handles[4]:is_alive()
            or handles[6]:is_alive() do
            socket.sleep(0.005)
          end
          tx:close()
        end, "closer")
      end
    end
  end, "receiver")
  net.run()
  for m, how in pairs(result) do
    if how == "sent" and received[m] ~= 1 then
      bad[#bad + 1] = ("message %d: send returned true, received %d times"):format(m, received[m] or 0)
    elseif how ~= "sent" and received[m] then
      bad[#bad + 1] = ("message %d: send returned %s, but it was received"):format(m, how)
    end
  end
  for m, times in pairs(received) do
    if times > 1 then bad[#bad + 1] = ("message %d received %d times"):format(m, times) end
  end
  local outcomes = {}
  for _, how in pairs(result) do outcomes[how] = (outcomes[how] or 0) + 1 end
  return bad, outcomes
end

describe("channel delivery", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  for _, capacity in ipairs({ 0, 1, 3 }) do
    it(("loses and duplicates nothing at capacity %d"):format(capacity), function()
      local bad, outcomes = stress(capacity, 7 + capacity)
      assert.same({}, bad)
      -- the run did exercise what it is about
      assert.is_true((outcomes.sent or 0) > 100)
      assert.is_true((outcomes.timeout or 0) > 0)
    end)
  end
end)
