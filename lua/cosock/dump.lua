--- cosock.dump: the state dump of a stalled loop (every live task waits on
--- something nothing can wake), printed just before cosock.run raises its
--- error: cosock 0.2.0's shape and words, the tasks the last pass resumed,
--- then the others. dump(print) writes it with the print given (cosock.lua
--- passes the print there was when cosock loaded, as cosock's). Loaded
--- when a loop first stalls.
local core = require "cosock.core"

local BANNER = "vvvvvvvvvvvvvvvvvvvvvvvv DUMP STATE vvvvvvvvvvvvvvvvvvvvvvvv"
local BANNER_END = "^^^^^^^^^^^^^^^^^^^^^^^^ DUMP STATE ^^^^^^^^^^^^^^^^^^^^^^^^"
local RULE = string.rep("=", 57)
local SEPARATOR = string.rep("-", 57)

local function dump_section(out, title, states)
  out(title .. " (" .. #states .. ")")
  out(RULE)
  for _, st in ipairs(states) do
    local info = st.info
    out(st.co, info.name)
    out(info.traceback)
    out("recvt:", info.recvt)
    out("sendt:", info.sendt)
    out("timeout:", info.timeout)
    out("last wake:", info.last_wake)
    out(SEPARATOR)
  end
end

return function(out)
  local woken, others = {}, {}
  for _, st in ipairs(core.thread_states()) do
    local list = st.woken and woken or others
    list[#list + 1] = st
  end
  out(BANNER)
  dump_section(out, "threads woken in last turn", woken)
  dump_section(out, "threads not woken in last turn", others)
  out(BANNER_END)
end
