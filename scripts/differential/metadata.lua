-- get_thread_metadata: one table per live task, its fields and their types,
-- for tasks parked on a timeout (integer and float), on a channel, on a socket,
-- not yet started, and the calling task itself.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

local function dump(label)
  local all = cosock.get_thread_metadata()
  R.show(label .. " count", #all)
  table.sort(all, function(a, b) return tostring(a.name) < tostring(b.name) end)
  for _, info in ipairs(all) do
    local keys = {}
    for k in pairs(info) do keys[#keys + 1] = k end
    table.sort(keys)
    print(label .. " " .. tostring(info.name) .. " keys: " .. table.concat(keys, ","))
    R.show("  name", info.name)
    R.show("  status", info.status)
    R.show("  recvt", info.recvt)
    R.show("  sendt", info.sendt)
    R.show("  timeout", info.timeout)
    R.show("  last_wake kind", R.kind(info.last_wake), info.last_wake == "unknown")
    R.show("  traceback starts", (info.traceback:match("^[^\n]*")))
  end
end

dump("before any spawn")
local tx, rx = cosock.channel.new()
local handles = {}
local spawn = cosock.spawn
cosock = setmetatable({ spawn = function(fn, name)
  local h = spawn(fn, name)
  handles[#handles + 1] = h
  return h
end }, { __index = cosock })
cosock.spawn(function() socket.sleep(7) end, "a-int-timeout")
cosock.spawn(function() socket.sleep(7.5) end, "b-float-timeout")
cosock.spawn(function() rx:receive() end, "c-channel")
local tx2, rx2 = cosock.channel.new()
cosock.spawn(function() socket.select({ rx2 }, nil, 3) end, "c2-select-channel")
local srv = socket.tcp()
assert(srv:bind("127.0.0.1", 0))
assert(srv:listen())
cosock.spawn(function() srv:accept() end, "d-accept")
local u = socket.udp()
assert(u:setsockname("127.0.0.1", 0))
cosock.spawn(function() u:settimeout(9) u:receive() end, "e-udp-timeout")
cosock.spawn(function() socket.select(nil, nil, nil) end, "f-nothing")
dump("not started")
cosock.spawn(function()
  socket.sleep(0.05)
  dump("inside")
  for _ = 1, 1 do socket.sleep(0) end
  for _, h in ipairs(handles) do
    if h.name ~= "z-inspector" then h:cancel() end
  end
  srv:close()
  u:close()
end, "z-inspector")
R.run("run")
dump("after run")
