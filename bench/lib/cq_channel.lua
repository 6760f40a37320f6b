-- A minimal unbounded channel for the cqueues programs: a FIFO queue plus a
-- cqueues condition variable, with the same observable behaviour the
-- workloads use from cosock.channel (send, receive, close; receive gives
-- nil, "closed" once closed and drained).
local condition = require "cqueues.condition"

local Channel = {}
Channel.__index = Channel

local function new()
  local ch = setmetatable({ q = {}, head = 1, tail = 0, closed = false,
                            cond = condition.new() }, Channel)
  return ch
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

return { new = new }
