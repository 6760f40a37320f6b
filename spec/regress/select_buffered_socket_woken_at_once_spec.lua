-- Regression: a select on a socket whose LuaSocket buffer already held data
-- (a receive("*l") had read more than its line) listed that socket as ready
-- at once, when the wait was made. cosock finds such a socket in the
-- LuaSocket select it makes after the pass's resumes, so an object another
-- task woke in the same pass comes first in the ready list. cosock/luxure's
-- server-sent events depend on it: its task selects over its channel and the
-- client's socket (whose request headers were left unread) and looks only at
-- the first ready object; the event a handler sent in that pass reached the
-- client on cosock, while on cosock-native the task took the socket first,
-- read it and closed the stream (scripts/real-clients/luxure_sse.lua).

local cosock = require "cosock"
local net = require "spec.support.net"

local socket = cosock.socket

describe("regress: a select on a socket with buffered data", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  -- A pair whose server side holds the rest of the request in LuaSocket's
  -- buffer (its first line read).
  local function buffered_pair()
    local c, s = net.pair()
    assert(c:send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert.equal("GET / HTTP/1.1", s:receive("*l"))
    assert.is_true(s.inner_sock:dirty())
    return c, s
  end

  local function names(list, rx, s)
    local out = {}
    for i, o in ipairs(list or {}) do out[i] = o == rx and "channel" or o == s and "socket" or "?" end
    return table.concat(out, ",")
  end

  it("comes after a channel another task sends on in the same pass", function()
    local r = {}
    cosock.spawn(function()
      local c, s = buffered_pair()
      local tx, rx = cosock.channel.new()
      local started = false
      cosock.spawn(function()
        local ready, _, err = socket.select({ rx, s }, nil, net.TIMEOUT)
        r.ready, r.err = names(ready, rx, s), err
        r.line = s:receive("*l")
      end, "selecter")
      cosock.spawn(function()
        -- runs in the selecter's first pass, after it (spawn order)
        started = true
        tx:send("event")
      end, "sender")
      while not r.line do socket.sleep(0.01) end
      assert.is_true(started)
      c:close()
      s:close()
    end, "driver")
    net.run()
    assert.same({ ready = "channel,socket", line = "Host: x" }, r)
  end)

  it("alone, is still woken in the next pass without waiting for the kernel", function()
    local r = {}
    cosock.spawn(function()
      local c, s = buffered_pair()
      local ready, _, err = socket.select({ s }, nil, net.TIMEOUT)
      r.ready, r.err = ready and #ready, err
      r.line = s:receive("*l")
      c:close()
      s:close()
    end, "selecter")
    net.run()
    assert.same({ ready = 1, line = "Host: x" }, r)
  end)

  it("is not woken when another task read the buffered data in the same pass", function()
    local r = {}
    cosock.spawn(function()
      local c, s = buffered_pair()
      cosock.spawn(function()
        local ready, _, err = socket.select({ s }, nil, 0.2)
        r.ready, r.err = ready and #ready, err
      end, "selecter")
      cosock.spawn(function()
        r.read = s:receive("*l") .. "|" .. s:receive("*l")
      end, "reader")
      while not r.err and not r.ready do socket.sleep(0.01) end
      c:close()
      s:close()
    end, "driver")
    net.run()
    assert.same({ read = "Host: x|", err = "timeout" }, r)
  end)
end)
