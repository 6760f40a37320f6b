-- driver_timers.lua: a device thread in the style of a SmartThings hub driver.
--
-- Shows: cosock.timer.create_interval / create_oneshot timers and a channel
-- watched by one select loop (as st.thread does it), timer:handled() after
-- each expiry, timer:cancel() of a pending oneshot (it never fires), and the
-- alarms cosock.timer.after and cosock.timer.timeout (a channel that closes).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh driver_timers
-- It prints, in this order:
--   poll 1
--   event: on
--   poll 2
--   refresh (oneshot)
--   event: off
--   poll 3
--   no reply within 50 ms (timeout channel closed)
--   poll 4
--   thread closed: 4 polls, 2 events, 1 refresh; the cancelled oneshot never fired
-- (the polls come every 100 ms, the events at 150 and 250 ms, the refresh at
-- 220 ms, the reply wait at 300 ms; the oneshot set for 350 ms is cancelled
-- at 200 ms.)

local cosock = require "cosock"
local socket, timer, channel = cosock.socket, cosock.timer, cosock.channel

-- A minimal device thread: events arrive on a channel, timers are watched
-- beside it; each ready object's handler runs in the thread's own task.
local Thread = {}
Thread.__index = Thread

local function new_thread(name)
  local self = setmetatable({ watched = {}, closed = false }, Thread)
  self.tx, self.rx = channel.new()
  cosock.spawn(function()
    while true do
      local recvt = { self.rx }
      for obj in pairs(self.watched) do recvt[#recvt + 1] = obj end
      local ready = assert(socket.select(recvt, nil, nil))
      for _, obj in ipairs(ready) do
        if obj == self.rx then
          local event, err = self.rx:receive()
          if event == nil then return end      -- err == "closed": the thread ends
          event.fn(table.unpack(event.args, 1, event.args.n))
        elseif self.watched[obj] then
          self.watched[obj](obj)
        end
      end
    end
  end, name)
  return self
end

function Thread:queue(fn, ...)
  self.tx:send({ fn = fn, args = table.pack(...) })
end

-- call_with_delay: a oneshot timer; its handler acknowledges it and stops
-- watching it.
function Thread:call_with_delay(delay, fn)
  local t = timer.create_oneshot(delay)
  self.watched[t] = function()
    t:handled()
    self.watched[t] = nil
    fn()
  end
  return t
end

-- call_on_schedule: an interval timer, acknowledged on every tick.
function Thread:call_on_schedule(interval, fn)
  local t = timer.create_interval(interval)
  self.watched[t] = function()
    t:handled()
    fn()
  end
  return t
end

function Thread:cancel_timer(t)
  t:cancel()
  self.watched[t] = nil
end

function Thread:close()
  for t in pairs(self.watched) do self:cancel_timer(t) end
  self.tx:close()
end

local polls, events, refreshes, late_fired = 0, 0, 0, false
local thread = new_thread("device thread")

thread:call_on_schedule(0.1, function()
  polls = polls + 1
  print("poll " .. polls)
end)
thread:call_with_delay(0.22, function()
  refreshes = refreshes + 1
  print("refresh (oneshot)")
end)
local late = thread:call_with_delay(0.35, function() late_fired = true end)

-- The "device": sends two events, then a request whose reply never comes.
local function event(what)
  thread:queue(function()
    events = events + 1
    print("event: " .. what)
  end)
end
timer.after(0.15, event, "on")
timer.after(0.25, event, "off")
timer.after(0.2, function() thread:queue(function() thread:cancel_timer(late) end) end)
timer.after(0.3, function()
  local reply_tx, reply_rx = channel.new() -- nobody will answer on it
  local deadline = timer.timeout(0.05)
  local ready = socket.select({ reply_rx, deadline }, nil, nil)
  if ready[1] == deadline then print("no reply within 50 ms (timeout channel closed)") end
  reply_tx:close()
end)
timer.after(0.45, function()
  thread:queue(function()
    thread:close()
    print(("thread closed: %d polls, %d events, %d refresh; the cancelled oneshot %s"):format(
      polls, events, refreshes, late_fired and "FIRED" or "never fired"))
  end)
end)

cosock.run()
