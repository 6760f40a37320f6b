-- cosock.profile: "new" is every switch of the README's "off by default"
-- list turned on at once, and so behaves exactly as turning each on; "cosock"
-- (the default) every switch off; no argument says which is in force. The
-- behaviour is observed without real time: counts of passes, zero timeouts.

local cosock = require "cosock"
local core = require "cosock.core"
local L = require "spec.support.loop"

-- What a program sees of each switch, as a table to compare.
local function pair()
  local server = assert(cosock.socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local client = assert(cosock.socket.connect("127.0.0.1", port))
  local peer = assert(server:accept())
  server:close()
  return client, peer
end

local function observe()
  local seen = {}
  cosock.spawn(function()
    -- close wakes: a receive with no timeout on a channel whose receiver
    -- another task closes, and a read on a socket another task closes.
    local _, rx = cosock.channel.new()
    local chan_reader = cosock.spawn(function()
      seen.channel_receive = { rx:receive() }
    end, "channel reader")
    local client, peer = pair()
    local sock_reader = cosock.spawn(function()
      seen.socket_receive = { client:receive("*l") }
    end, "socket reader")
    L.passes(2)
    rx:close()
    client:close()
    L.passes(3)
    seen.channel_reader_woken = not chan_reader:is_alive()
    seen.socket_reader_woken = not sock_reader:is_alive()
    chan_reader:cancel()
    sock_reader:cancel()
    peer:close()
    -- a closed, empty receiver in select
    local tx2, rx2 = cosock.channel.new()
    tx2:close()
    local ready, _, err = cosock.socket.select({ rx2 }, nil, 0)
    seen.select_closed = ready and "ready" or err
    -- a zero timeout: one yield first (cosock) or none (LuaSocket)
    local c2, p2 = pair()
    local ticks = 0
    local ticker = cosock.spawn(function() while true do ticks = ticks + 1; L.pass() end end, "ticker")
    L.pass()                                     -- (the ticker has started)
    local before = ticks
    c2:settimeout(0)
    seen.zero_timeout = { c2:receive("*l") }
    seen.ticks_during_zero_timeout = ticks - before
    ticker:cancel()
    c2:close()
    p2:close()
  end, "observer")
  cosock.run()
  return seen
end

describe("cosock.profile", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("is 'cosock' by default and after reset(); no argument only reads it", function()
    assert.equal("cosock", cosock.profile())
    assert.equal("cosock", cosock.profile("new"))
    assert.equal("new", cosock.profile())
    cosock.reset()
    assert.equal("cosock", cosock.profile())
  end)

  it("'new' turns on every switch that is off by default, 'cosock' turns them off", function()
    cosock.profile("new")
    assert.is_true(core.close_wakes())
    assert.is_true(core.luasocket_timeouts())
    assert.equal("new", cosock.profile("cosock"))
    assert.is_false(core.close_wakes())
    assert.is_false(core.luasocket_timeouts())
  end)

  it("covers every set_* switch of cosock that has a reader in cosock.core", function()
    -- (set_error_handler, set_accounting and set_watchdog are additions a
    -- program configures, not cosock behaviours a switch corrects.)
    local switches = {}
    for k in pairs(core) do
      local name = type(k) == "string" and k:match("^set_(.+)$")
      if name and type(cosock["set_" .. name]) == "function" and type(core[name]) == "function"
        and name ~= "accounting" then
        switches[#switches + 1] = name
      end
    end
    table.sort(switches)
    assert.same({ "close_wakes", "luasocket_timeouts" }, switches)
  end)

  it("says 'mixed' when the switches were set one by one to neither profile", function()
    cosock.set_close_wakes(true)
    assert.equal("mixed", cosock.profile())
    assert.equal("mixed", cosock.profile("cosock"))
    assert.equal("cosock", cosock.profile())
  end)

  it("'new' behaves as set_close_wakes(true) and set_luasocket_timeouts(true) together", function()
    local default = observe()
    cosock.reset()
    cosock.set_close_wakes(true)
    cosock.set_luasocket_timeouts(true)
    local each_on = observe()
    cosock.reset()
    cosock.profile("new")
    local profile = observe()
    assert.same(each_on, profile)
    -- and it is a difference a program sees, on every point
    assert.same({ nil, "closed" }, profile.channel_receive)
    assert.equal("closed", profile.socket_receive[2])
    assert.is_true(profile.channel_reader_woken)
    assert.is_true(profile.socket_reader_woken)
    assert.equal("ready", profile.select_closed)
    assert.equal(0, profile.ticks_during_zero_timeout)
    assert.is_false(default.channel_reader_woken)
    assert.is_false(default.socket_reader_woken)
    assert.equal("timeout", default.select_closed)
    assert.equal(1, default.ticks_during_zero_timeout)
    assert.same(default.zero_timeout, profile.zero_timeout)
    cosock.reset()
    cosock.profile("new")
    cosock.profile("cosock")
    assert.same(default, observe())
  end)

  it("raises for any other name, with the caller's position", function()
    local ok, err = pcall(cosock.profile, "fast")
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'profile' %('new' or 'cosock' expected, got 'fast'%)", err)
    ok, err = pcall(function() cosock.profile(nil) end)
    assert.is_false(ok)
    assert.matches("^spec/profile_spec.lua:%d+: bad argument #1 to 'profile' %('new' or 'cosock' expected, got nil%)", err)
    assert.equal("cosock", cosock.profile())
  end)
end)
