-- In a coroutine whose yields the task forwards to the loop, cosock 0.2.0's
-- wrappers yield exactly three values, ({self}, {}, timeout) to wait for
-- reading and ({}, {self}, timeout) for writing, the timeout being the
-- wrapper's own value (an integer stays an integer); a channel's receive
-- yields ({receiver}, nil, timeout). cosock-native yields the same.

local cosock = require "cosock"
local net = require "spec.support.net"
local compat = require "cosock.compat"
local V = require "spec.support.version"

-- Runs fn in a coroutine of its own, forwarding its yields; returns the first
-- yield, described.
local function first_yield(fn)
  local co = coroutine.create(fn)
  local res = compat.pack(coroutine.resume(co))
  local first
  while coroutine.status(co) == "suspended" do
    if not first then
      first = { n = res.n - 1 }
      for i = 2, res.n do
        local v = res[i]
        if type(v) == "table" then first[i - 1] = "table#" .. #v
        elseif type(v) == "number" then first[i - 1] = V.describe(v)
        else first[i - 1] = type(v) end
      end
    end
    res = compat.pack(coroutine.resume(co, coroutine.yield(compat.unpack(res, 2, res.n))))
  end
  assert(res[1], res[2])
  return first
end

describe("what a wrapper's wait yields in a forwarding coroutine", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("receive: ({self}, {}, timeout), the timeout as set", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(2)
      cosock.spawn(function() cosock.socket.sleep(0.01); s:send("x\n") end, "sender")
      r = first_yield(function() return c:receive() end)
      c:close(); s:close()
    end, "receiver")
    net.run()
    assert.same({ n = 3, "table#1", "table#0", V.int("2") }, r)
  end)

  it("connect: ({}, {self}, timeout)", function()
    local r
    cosock.spawn(function()
      local srv, port = net.listen()
      local c = cosock.socket.tcp()
      c:settimeout(3)
      r = first_yield(function() return c:connect("127.0.0.1", port) end)
      local a = assert(srv:accept())
      a:close(); c:close(); srv:close()
    end, "connector")
    net.run()
    assert.same({ n = 3, "table#0", "table#1", V.int("3") }, r)
  end)

  it("a channel receive: ({receiver}, nil, timeout)", function()
    local r
    cosock.spawn(function()
      local tx, rx = cosock.channel.new()
      cosock.spawn(function() cosock.socket.sleep(0.01); tx:send("m") end, "sender")
      r = first_yield(function() return rx:receive() end)
    end, "receiver")
    net.run()
    assert.same({ n = 3, "table#1", "nil", "nil" }, r)
  end)
end)
