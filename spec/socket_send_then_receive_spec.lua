-- A receive right after a send on the same wrapper waits for readability
-- before its first recv() (the answer has almost never arrived yet). These
-- specs pin what must not change because of that: data already there is
-- returned, buffered data is returned without waiting, timeout 0 still fails
-- at once, and the timeout values are LuaSocket's.
local cosock = require "cosock"
local net = require "spec.support.net"

describe("receive after send", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("returns an answer that arrived before the receive", function()
    local got, err
    cosock.spawn(function()
      local c, s = net.pair()
      assert(s:send("early\n"))          -- the answer is there before c asks
      assert(c:send("question\n"))
      got, err = c:receive("*l")
      assert.equal("question", s:receive("*l"))
      c:close(); s:close()
    end, "asker")
    net.run()
    assert.is_nil(err)
    assert.equal("early", got)
  end)

  it("returns data left in LuaSocket's buffer without waiting for the socket", function()
    local first, second
    cosock.spawn(function()
      local c, s = net.pair()
      assert(s:send("one\ntwo\n"))
      first = c:receive("*l")            -- "two\n" stays buffered inside LuaSocket
      assert(c:send("ack\n"))
      second = c:receive("*l")           -- nothing more arrives on the socket
      c:close(); s:close()
    end, "reader")
    net.run()
    assert.equal("one", first)
    assert.equal("two", second)
  end)

  it("with timeout 0 fails at once with LuaSocket's values", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(0)
      assert(c:send("x"))
      r = net.pack(c:receive(3, "ab"))
      c:close(); s:close()
    end, "impatient")
    net.run()
    assert.is_nil(r[1])
    assert.equal("timeout", r[2])
    assert.equal("ab", r[3])
  end)

  it("times out with LuaSocket's partial data (the prefix, or '') when no answer comes", function()
    local r, plain
    cosock.spawn(function()
      local c, s = net.pair()
      c:settimeout(0.05)
      assert(c:send("x"))
      r = net.pack(c:receive("*l", "pre"))
      assert(c:send("y"))
      plain = net.pack(c:receive())
      c:close(); s:close()
    end, "waiter")
    net.run()
    assert.same({ n = 3, nil, "timeout", "pre" }, r)
    assert.same({ n = 3, nil, "timeout", "" }, plain)
  end)

  it("a peer that closes after the send wakes the receiver with 'closed'", function()
    local r
    cosock.spawn(function()
      local c, s = net.pair()
      assert(c:send("bye\n"))
      cosock.spawn(function() s:close() end, "closer")
      r = net.pack(c:receive("*l"))
      c:close()
    end, "receiver")
    net.run()
    assert.is_nil(r[1])
    assert.equal("closed", r[2])
  end)
end)
