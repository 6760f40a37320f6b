-- cosock.set_luasocket_timeouts (doc/reference.md): off (the default) a
-- wrapper's timeouts are cosock 0.2.0's: settimeout's mode is ignored (t
-- limits each wait) and a zero or negative timeout fails a call after one
-- yield, so other tasks run first. On: LuaSocket's meaning, a "t" timeout
-- limits the whole call and a zero timeout fails at once.

local cosock = require "cosock"
local core = require "cosock.core"
local net = require "spec.support.net"

local socket = cosock.socket
local pack = net.pack

describe("cosock.set_luasocket_timeouts", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    cosock.set_luasocket_timeouts(false)
    net.check_clean()
  end)

  it("is off by default, returns the previous setting, and reset turns it off", function()
    assert.is_false(core.luasocket_timeouts())
    assert.is_false(cosock.set_luasocket_timeouts(true))
    assert.is_true(cosock.set_luasocket_timeouts(true))
    assert.is_true(core.luasocket_timeouts())
    cosock.reset()
    assert.is_false(core.luasocket_timeouts())
  end)

  it("takes only a boolean", function()
    for _, v in ipairs({ 0, "on", {} }) do
      local ok, err = pcall(cosock.set_luasocket_timeouts, v)
      assert.is_false(ok)
      assert.matches("bad argument #1 to 'set_luasocket_timeouts' (boolean expected, got " ..
        type(v) .. ")", err, 1, true)
    end
    assert.is_false(pcall(cosock.set_luasocket_timeouts))
    assert.is_false(core.luasocket_timeouts())
  end)

  -- Inside a task: a receive, an accept and a udp receive with timeout t that
  -- would wait; a task spawned just before each counts whether it ran before
  -- the call returned. Returns the results and those counts.
  local function zero_timeout_calls(t)
    local r = { ran = {} }
    local function call(label, fn)
      local ran = false
      cosock.spawn(function() ran = true end, "other")
      r[label] = pack(fn())
      r.ran[label] = ran
      socket.sleep(0) -- (lets "other" end)
    end
    local c, s = net.pair()
    c:settimeout(t)
    call("receive", function() return c:receive("*l") end)
    local srv = net.listen()
    srv:settimeout(t)
    call("accept", function() return srv:accept() end)
    local u = assert(socket.udp())
    assert(u:setsockname("127.0.0.1", 0))
    u:settimeout(t)
    call("udp", function() return u:receive() end)
    c:close(); s:close(); srv:close(); u:close()
    return r
  end

  for _, t in ipairs({ 0, -1 }) do
    for _, on in ipairs({ false, true }) do
      local what = on and "on: a timeout of " .. t .. " fails a call at once, the same values"
        or "off: a timeout of " .. t .. " fails a call after one yield (other tasks run first)"
      it(what, function()
        cosock.set_luasocket_timeouts(on)
        local r
        cosock.spawn(function() r = zero_timeout_calls(t) end, "poller")
        net.run()
        assert.same({ n = 3, nil, "timeout", "" }, r.receive)
        assert.same({ n = 2, nil, "timeout" }, r.accept)
        assert.same({ n = 2, nil, "timeout" }, r.udp)
        assert.same({ receive = not on, accept = not on, udp = not on }, r.ran)
      end)
    end
  end

  it("off: a task polling a socket with settimeout(0) leaves the processor to the others", function()
    local got, turns
    cosock.spawn(function()
      local c, s = net.pair()
      cosock.spawn(function() assert(s:send("late\n")) end, "sender")
      c:settimeout(0)
      turns = 0
      repeat -- no other yield: the receive's own lets the sender run
        got = c:receive("*l")
        turns = turns + 1
      until got or turns > 1000
      c:close(); s:close()
    end, "poller")
    net.run()
    assert.equal("late", got)
  end)

  it("off: the mode of settimeout is ignored, on: 't' is the whole call's limit", function()
    local w = socket.tcp()
    w:settimeout(2, "t")
    assert.equal(2, w.timeout)
    assert.is_nil(w.total)
    cosock.set_luasocket_timeouts(true)
    w:settimeout(3, "t")
    assert.equal(3, w.total)
    assert.equal(2, w.timeout)
    w:close()
  end)
end)
