-- A minimal channel for the cqueues programs: a FIFO queue plus cqueues
-- condition variables, with the same observable behaviour the workloads use
-- from cosock.channel (send, receive, close; receive gives nil, "closed" once
-- closed and drained).
--   new():  unbounded; one condition ("not empty") that every send signals.
--   new(n): at most n queued; a second condition ("room") that a send
--           waits on while the queue is full and every receive signals.
--   new(0): a rendezvous; the send queues its message and waits on "room"
--           until a receive took it.
-- Each kind has its own methods, so the unbounded one does no work for the
-- others. Waits re-check their condition in a loop, so whether a signal wakes
-- one waiter or all does not matter.
local condition = require "cqueues.condition"

local Channel = {}      -- unbounded
Channel.__index = Channel
local Bounded = {}
Bounded.__index = Bounded
local Rendezvous = {}
Rendezvous.__index = Rendezvous

local function new(capacity)
  if capacity == nil then
    return setmetatable({ q = {}, head = 1, tail = 0, closed = false,
                          cond = condition.new() }, Channel)
  end
  return setmetatable({ q = {}, head = 1, tail = 0, closed = false, cap = capacity,
                        cond = condition.new(), room = condition.new() },
                      capacity > 0 and Bounded or Rendezvous)
end

function Channel:send(msg)
  if self.closed then return false, "closed" end
  local t = self.tail + 1
  self.tail = t
  self.q[t] = msg
  self.cond:signal()
  return true
end

function Channel:receive()
  while self.head > self.tail do
    if self.closed then return nil, "closed" end
    self.cond:wait()
  end
  local h = self.head
  local msg = self.q[h]
  self.q[h] = nil
  self.head = h + 1
  return msg
end

function Channel:close()
  self.closed = true
  self.cond:signal()
end

-- (The bounded kinds repeat Channel's code rather than call it: a call per
-- message would make cqueues look slower than it is.)
function Bounded:send(msg)
  if self.closed then return false, "closed" end
  while self.tail - self.head + 1 >= self.cap do
    self.room:wait()
    if self.closed then return nil, "closed" end
  end
  local t = self.tail + 1
  self.tail = t
  self.q[t] = msg
  self.cond:signal()
  return true
end

function Rendezvous:send(msg)
  if self.closed then return false, "closed" end
  local t = self.tail + 1
  self.tail = t
  self.q[t] = msg
  self.cond:signal()
  while self.head <= t do -- not taken yet
    self.room:wait()
    if self.closed and self.head <= t then return nil, "closed" end
  end
  return true
end

function Bounded:receive()
  while self.head > self.tail do
    if self.closed then return nil, "closed" end
    self.cond:wait()
  end
  local h = self.head
  local msg = self.q[h]
  self.q[h] = nil
  self.head = h + 1
  self.room:signal()
  return msg
end
Rendezvous.receive = Bounded.receive

function Bounded:close()
  self.closed = true
  self.cond:signal()
  self.room:signal()
end
Rendezvous.close = Bounded.close

return { new = new }
