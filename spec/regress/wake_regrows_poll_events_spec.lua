-- Regression: run walked the poller's event buffer through a pointer kept
-- across each object's _wake. A _wake that made the poller watch one more fd
-- (here: it starts a name lookup in a coroutine, whose socket the resolver
-- watches at once) regrew that buffer when the count of watched fds crossed
-- its size (64): the walk went on in freed memory (ASan: use-after-free; a
-- plain build woke the wrong objects or none). Each event is now read
-- through the poller.

local cosock = require "cosock"
local core = require "cosock.core"
local raw = require "socket"

local dns = cosock.socket.dns

if core.dns ~= "c-ares" then
  describe("regress: a _wake that watches one more fd (no c-ares)", function()
    pending("needs the c-ares resolver (its lookups watch an fd at once)")
  end)
  return
end

-- n objects over readable UDP sockets, each waited on by its own task; the
-- first _wake starts lookups. Returns the order of the wakes and the tasks'
-- outcomes (each must get its own object back, not a timeout).
local function scenario(n)
  local sender = assert(raw.udp())
  local objs, socks, woke, got = {}, {}, {}, {}
  for i = 1, n do
    local u = assert(raw.udp())
    assert(u:setsockname("127.0.0.1", 0))
    local _, port = u:getsockname()
    assert(sender:sendto("x", "127.0.0.1", port))
    socks[i] = u
    local o = { inner_sock = u, id = i }
    function o:setwaker(_, fn) self.waker = fn end
    function o:_wake()
      woke[#woke + 1] = self.id
      if #woke == 1 then
        for k = 1, 3 do                        -- one more watched fd (or a few)
          local co = coroutine.create(function() return dns.toip("grow" .. k .. ".invalid") end)
          assert(coroutine.resume(co))
        end
      end
      if self.waker then self.waker() end
    end
    objs[i] = o
  end
  for i = 1, n do
    cosock.spawn(function()
      local r = coroutine.yield({ objs[i] }, nil, 5)
      got[i] = r and r[1] == objs[i] and "own" or tostring(r and r[1] and r[1].id or "timeout")
    end, "waiter " .. i)
  end
  cosock.run()
  sender:close()
  for i = 1, n do socks[i]:close() end
  return woke, got
end

describe("regress: a _wake that makes the poller watch one more fd", function()
  before_each(function()
    cosock.reset()
    assert(dns.configure { servers = { "127.0.0.1:9" } })  -- nothing answers there
  end)
  after_each(function()
    cosock.reset()
    assert(dns.configure {})                   -- the system's servers again
    collectgarbage()
    collectgarbage()
  end)

  it("every object polled ready is woken once, and each task gets its own", function()
    -- Around the buffer's first size, whatever else the process watches.
    for n = 56, 72 do
      local woke, got = scenario(n)
      table.sort(woke)
      local want, own = {}, {}
      for i = 1, n do want[i] = i; own[i] = "own" end
      assert.are.same(want, woke)
      assert.are.same(own, got)
      cosock.reset()
    end
  end)
end)
