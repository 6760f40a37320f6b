-- A task that runs socket and channel calls in a coroutine of its own and
-- forwards each yield to the loop (as libraries with their own coroutines do):
-- what the inner coroutine yields (count, types, list sizes) and what the
-- calls return in the end.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
local cosock = require "cosock"
local socket = cosock.socket

local function describe_yield(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "table" then
      parts[i] = "table#" .. #v
    elseif type(v) == "number" then
      parts[i] = math.type(v)
    else
      parts[i] = type(v)
    end
  end
  return n .. " | " .. table.concat(parts, ", ")
end

-- Runs fn in its own coroutine, forwarding its yields, printing the first
-- yield of each distinct shape (in the order seen).
local function forwarding(label, fn)
  local co = coroutine.create(fn)
  local seen = {}
  local res = table.pack(coroutine.resume(co))
  while coroutine.status(co) == "suspended" do
    local shape = describe_yield(table.unpack(res, 2, res.n))
    if not seen[shape] then
      seen[shape] = true
      print(label .. " yields: " .. shape)
    end
    res = table.pack(coroutine.resume(co, coroutine.yield(table.unpack(res, 2, res.n))))
  end
  R.show(label .. " returns", table.unpack(res, 1, res.n))
end

local srv, port = R.listen()
local tx, rx = cosock.channel.new()
cosock.spawn(function()
  srv:settimeout(2)
  forwarding("accept", function() return R.describe(srv:accept()) end)
end, "acceptor")
cosock.spawn(function()
  socket.sleep(0.05)
  local c = socket.tcp()
  c:settimeout(2)
  assert(c:connect("127.0.0.1", port))
  socket.sleep(0.05)
  c:close()
end, "connector")
R.run("run accept")

cosock.spawn(function()
  local c = socket.tcp()
  c:settimeout(2)
  forwarding("connect", function() return c:connect("127.0.0.1", port) end)
  local s = srv:accept()
  cosock.spawn(function()
    socket.sleep(0.02)
    s:send("line\n")
    socket.sleep(0.02)
    tx:send("msg")
  end, "sender")
  forwarding("receive", function() return c:receive() end)
  forwarding("channel receive", function() return rx:receive() end)
  forwarding("sleep", function() return socket.sleep(0.01) end)
  forwarding("select", function() return select("#", socket.select({ rx }, nil, 0.01)) end)
  c:close()
  s:close()
  srv:close()
end, "client")
R.run("run")
