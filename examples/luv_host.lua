-- luv_host: cosock-native inside luv's loop (Debian's lua-luv). luv owns the
-- thread; it watches cosock.pollfd() and calls cosock.step(0) when it is
-- readable. A luv timer of the host sends three messages into a cosock
-- channel from outside the loop (then next_timeout() re-arms the pollfd),
-- and a cosock task receives them and sleeps between them. Prints:
--   task got tick 1
--   task got tick 2
--   task got tick 3
--   luv loop ended: cosock has no task left
local uv = require "luv"
local cosock = require "cosock"

local tx, rx = cosock.channel.new()

cosock.spawn(function()
  for _ = 1, 3 do
    print("task got " .. rx:receive())
    cosock.socket.sleep(0.005)                   -- a cosock timer, also seen by pollfd
  end
end, "receiver")

local poll = uv.new_poll(cosock.pollfd())
poll:start("r", function()
  if not cosock.step(0) then                     -- no task left: let luv's loop end
    poll:stop()
    poll:close()
  end
end)

local ticks, timer = 0, uv.new_timer()
timer:start(10, 10, function()
  ticks = ticks + 1
  tx:send("tick " .. ticks)                      -- from outside the loop:
  cosock.next_timeout()                          -- re-arm the pollfd for it
  if ticks == 3 then
    timer:stop()
    timer:close()
  end
end)

uv.run()
print("luv loop ended: cosock has no task left")
