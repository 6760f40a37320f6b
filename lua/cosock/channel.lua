--- cosock.channel: message channels between cosock tasks.
---
--- new([capacity]) -> sender, receiver
---   no capacity (or nil): cosock 0.2.0's unbounded channel; send never waits.
---   capacity n > 0: at most n queued messages; a send waits while the queue
---                  is full, senders waiting are served in the order they came.
---   capacity 0:    a rendezvous; a send completes when a receiver takes the
---                  message.
--- Both ends hold the same `link` table, as in cosock:
---   link.queue   the queued messages; `#link.queue` is how many are queued
---   link.closed  true once either side closed the channel
---   link.waker   the waker of the task waiting on the receiver in select
---
--- sender:send(msg)          true; false, "closed" (closed before the call);
---                           nil, "closed" (closed while it waited);
---                           nil, "timeout" (sender:settimeout elapsed)
--- sender:close(), receiver:close()   close the channel; queued messages are
---                           still received, every waiting task is woken
--- receiver:receive()        the oldest message; nil, "closed" once closed and
---                           empty; nil, "timeout"
--- sender:settimeout(t), receiver:settimeout(t)   nil: no limit; 0 or less:
---                           fail at once instead of waiting; returns nothing
--- receiver:setwaker("recvr", fn), sender:setwaker("sendr", fn)   the waker
---                           protocol, so both ends can be passed to
---                           cosock.socket.select; one task at a time per end
---
--- The channels are implemented in C (src/features/channel.c); doc/channels.md and
--- doc/reference.md give the whole contract.

local core = require "cosock.core"
core.open "channel" -- (its C functions: added to cosock.core on first use)

local m = {}

m.new = core.channel_new
m.sender = core.channel_sender
m.receiver = core.channel_receiver

-- setwaker's errors come from here, with this file's position, as cosock's
-- (raised by assert and error in its channel.lua) do: programs and the
-- loop's error path see the same text. (Only the waker protocol goes
-- through these; a receive or send in the task's own coroutine does not.)
for _, methods in ipairs { m.sender, m.receiver } do
  local setwaker = methods.setwaker
  methods.setwaker = function(self, kind, fn)
    local ok, err = pcall(setwaker, self, kind, fn)
    if not ok then error(err, 1) end
  end
end

return m
