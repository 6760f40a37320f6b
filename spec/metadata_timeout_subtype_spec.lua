-- get_thread_metadata's `timeout` is the value the task yielded, as it was
-- yielded (cosock 0.2.0 keeps it as given): an integer timeout reads back as
-- an integer (7, not 7.0), and a wrapper's wait reports the wrapper's own
-- timeout (settimeout(9) -> the integer 9). Before 5.3 numbers have no
-- subtype: there the value is checked (spec/support/version.lua).

local cosock = require "cosock"
local net = require "spec.support.net"
local V = require "spec.support.version"

local function entry(name)
  for _, info in ipairs(cosock.get_thread_metadata()) do
    if info.name == name then return info end
  end
end

describe("get_thread_metadata's timeout keeps the yielded number's subtype", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("an integer yield reads back as an integer, a float as a float", function()
    local r = {}
    local int = cosock.spawn(function() cosock.socket.sleep(7) end, "int")
    local flt = cosock.spawn(function() cosock.socket.sleep(7.5) end, "float")
    local sel = cosock.spawn(function() coroutine.yield(nil, nil, 3) end, "select")
    cosock.spawn(function()
      cosock.socket.sleep(0)
      for _, name in ipairs { "int", "float", "select" } do
        local t = entry(name).timeout
        r[name] = V.describe(t)
      end
      int:cancel(); flt:cancel(); sel:cancel()
    end, "inspector")
    net.run()
    assert.same({ int = V.int("7"), float = V.float("7.5"), select = V.int("3") }, r)
  end)

  it("a wrapper's wait reports the wrapper's own timeout, with its subtype", function()
    local r
    cosock.spawn(function()
      local u = cosock.socket.udp()
      assert(u:setsockname("127.0.0.1", 0))
      local h = cosock.spawn(function() u:settimeout(9); u:receive() end, "udp")
      cosock.socket.sleep(0)
      local t = entry("udp").timeout
      r = V.describe(t)
      h:cancel()
      u:close()
    end, "inspector")
    net.run()
    assert.equal(V.int("9"), r)
  end)
end)
