-- cosock: the public module of cosock-native, a drop-in replacement for the
-- cosock 0.2.0 coroutine executor. The run loop lives in C (cosock.core);
-- this file puts the API together and prints the thread dump of a stall.
local core = require "cosock.core"

local m = {}

m._VERSION = "0.2.0"                  -- the cosock API this implements
m._NATIVE_VERSION = core._VERSION     -- the cosock-native package version

m.spawn = core.spawn
m.run = core.run
m.reset = core.reset
m.get_thread_metadata = core.get_thread_metadata
m.set_error_handler = core.set_error_handler

m.socket = require "cosock.socket"
m.channel = require "cosock.channel"
m.asyncify = require "cosock.asyncify"
m.timer = require "cosock.timer"
m.signal = require "cosock.signal"
m.when = require "cosock.when"

-- cosock.ssl needs LuaSec: load it on first use, so that programs without
-- TLS run where LuaSec is not installed.
setmetatable(m, {
  __index = function(t, k)
    if k == "ssl" then
      local ssl = require "cosock.ssl"
      rawset(t, "ssl", ssl)
      return ssl
    end
  end,
})

-- Printed when every live task waits on something nothing can wake, just
-- before run raises its error: what each task waits on, and where.
local function dump_threads()
  local threads = core.get_thread_metadata()
  local out = { "==== cosock: thread dump (" .. #threads .. " live) ====" }
  for _, info in ipairs(threads) do
    out[#out + 1] = string.format("task %s  status=%s  recvt=%d sendt=%d timeout=%s last_wake=%s",
      tostring(info.name), info.status, info.recvt, info.sendt,
      tostring(info.timeout), tostring(info.last_wake))
    out[#out + 1] = info.traceback
    out[#out + 1] = "----"
  end
  out[#out + 1] = "==== end of thread dump ===="
  print(table.concat(out, "\n"))
end
core.set_stall_hook(dump_threads)

return m
