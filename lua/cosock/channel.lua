--- cosock.channel: unbounded message channels between cosock tasks.
---
--- `new()` returns `sender, receiver`; both hold the same `link` table:
---   link.queue   the queued messages; `#link.queue` is how many are queued
---   link.closed  true once either side closed the channel
---   link.waker   the waker of the task waiting in select (or forwarding), or
---                true for the ticket of a task waiting in receive (link.wslot,
---                link.wid; src/chanwait.c)
--- A receiver speaks the waker protocol (setwaker "recvr"), so it can be passed to
--- cosock.socket.select next to sockets.
---
--- The queue keeps its messages at integer keys first..last (fields of the queue
--- table) so that taking the oldest is O(1); its metatable's __len makes
--- `#queue` the number of queued messages, the shape libraries built on cosock read.

local setmetatable, error, tostring, tonumber, type =
  setmetatable, error, tostring, tonumber, type

-- The loop's C core: its monotonic clock for deadlines, and the channel's
-- wait and wake (src/chanwait.c): a receive parks its task without the waker
-- protocol, leaving a ticket (link.wslot, link.wid) that wake uses.
local core = require "cosock.core"
local monotime = core.monotime
local channel_wait, channel_wake = core.channel_wait, core.channel_wake
local channel_waiting = core.channel_waiting

local m = {}

-- Stands for a nil message in the queue (a nil cannot be stored in a table).
local NIL = setmetatable({}, { __tostring = function() return "cosock.channel.NIL" end })

local queue_mt = {
  __len = function(q) return q.last - q.first + 1 end,
}

local sender = {}
local receiver = {}
local sender_mt = { __index = sender }
local receiver_mt = { __index = receiver }
m.sender, m.receiver = sender, receiver

--- new() -> sender, receiver
function m.new()
  local link = {
    queue = setmetatable({ first = 1, last = 0 }, queue_mt),
    closed = false,
    waker = nil,
  }
  local rx = setmetatable({ link = link, timeout = nil }, receiver_mt)
  rx._recvt = { rx } -- the wait table, reused by every wait
  return setmetatable({ link = link }, sender_mt), rx
end

-- Wake the waiting receiver, if any, and drop its waker: a function (a task
-- in select) is called; true stands for the ticket of a task in receive.
local function wake(link)
  local w = link.waker
  if w ~= nil then
    link.waker = nil
    if w == true then channel_wake(link) else w() end
  end
end

---------------------------------------------------------------------------
-- sender
---------------------------------------------------------------------------

--- send(msg): queue msg (nil allowed) and wake a waiting receiver. Returns true, or
--- false, "closed" once the channel is closed.
function sender:send(msg)
  local link = self.link
  if link.closed then return false, "closed" end
  local q = link.queue
  local last = q.last + 1
  q.last = last
  if msg == nil then msg = NIL end
  q[last] = msg
  wake(link)
  return true
end

--- close(): close the channel; queued messages are still received, a waiting
--- receiver is woken.
function sender:close()
  local link = self.link
  link.closed = true
  wake(link)
end

---------------------------------------------------------------------------
-- receiver
---------------------------------------------------------------------------

local function take(q, first)
  local msg = q[first]
  q[first] = nil
  if first == q.last then
    q.first, q.last = 1, 0 -- empty: start again at 1
  else
    q.first = first + 1
  end
  if msg == NIL then return nil end
  return msg
end

--- receive(): the oldest message, waiting for one if none is queued.
--- Returns nil, "closed" once the channel is closed and empty; nil, "timeout" when
--- the receiver's timeout (settimeout) elapsed first. A timeout of 0 fails at once.
function receiver:receive()
  local link = self.link
  local q = link.queue
  local first = q.first
  if first <= q.last then return take(q, first) end
  if link.closed then return nil, "closed" end
  local t = self.timeout
  local deadline
  if t ~= nil then
    if t <= 0 then return nil, "timeout" end
    deadline = monotime() + t
  end
  while true do
    local _, _, err = channel_wait(self, link, t)
    first = q.first
    if first <= q.last then return take(q, first) end
    if link.closed then return nil, "closed" end
    if err == "timeout" then return nil, "timeout" end
    if deadline ~= nil then
      t = deadline - monotime()
      if t <= 0 then return nil, "timeout" end
    end
  end
end

--- settimeout(t): how long receive may wait (nil: no limit; zero or negative: a
--- receive with nothing queued fails at once). Returns nothing, as in cosock.
function receiver:settimeout(t)
  if t ~= nil then
    local n = tonumber(t)
    if n == nil then
      error("bad argument #1 to 'settimeout' (number expected, got " .. type(t) .. ")", 2)
    end
    t = n
  end
  self.timeout = t
end

--- close(): close the channel from the receiving side.
function receiver:close()
  local link = self.link
  link.closed = true
  wake(link)
end

--- setwaker("recvr", fn): the waker protocol. Only one task can wait on a channel; a
--- waker set while messages are queued (or the channel is closed) is called at once.
--- Its errors carry this file's position, as cosock's (raised by assert) do.
function receiver:setwaker(kind, fn)
  if kind ~= "recvr" then
    error("unsupported wake kind: " .. tostring(kind))
  end
  local link = self.link
  local w = link.waker
  if fn == nil then
    -- The loop takes back the waker of a task in select. A ticket (true) is
    -- another task's wait in receive, which the loop never sets or clears here.
    if w ~= true then link.waker = nil end
    return
  end
  if channel_waiting(link) then
    error("waker already set, receive can't be waited on from multiple places at once")
  end
  link.waker = fn
  if link.closed or link.queue.first <= link.queue.last then
    wake(link)
  end
end

return m
