-- The fields a program sees in a tcp wrapper (pairs): inner_sock and class,
-- as on cosock 0.2.0, however the wrapper was made, plus what it set
-- (timeout) and the private ones made lazily (wrap.lua: _recvt/_sendt when a
-- wait yields its tuple, _closed after close). The constructor sizes the
-- table for the fields the loop and close add later (a `_closed = nil` entry
-- in it, lua/cosock/socket/tcp.lua); that entry must never show before close.

local cosock = require "cosock"
local net = require "spec.support.net"

-- The wrapper's string keys other than the lazily made wait tables.
local function field_names(w)
  local names = {}
  for k in pairs(w) do
    if type(k) == "string" and k ~= "_recvt" and k ~= "_sendt" then names[#names + 1] = k end
  end
  table.sort(names)
  return table.concat(names, ",")
end

describe("a tcp wrapper's fields", function()
  after_each(net.check_clean)

  it("are inner_sock and class when made by socket.tcp()", function()
    local s = assert(cosock.socket.tcp())
    assert.equal("class,inner_sock", field_names(s))
    assert.equal(nil, rawget(s, "_closed"))
    s:close()
    assert.equal(true, rawget(s, "_closed"))
  end)

  it("are inner_sock and class for both ends of a connection, and _closed after close", function()
    local r = net.in_task(function()
      local c, s = net.pair()
      assert(c:send("x\n"))
      assert(s:receive() == "x")               -- (a wait on each end first)
      local before = { field_names(c), field_names(s) }
      c:close()
      s:close()
      return before, field_names(c), field_names(s)
    end)
    -- (timeout: net.pair set it; the fd cache's key is not a string)
    assert.same({ "class,inner_sock,timeout", "class,inner_sock,timeout" }, r[1])
    assert.equal("_closed,class,inner_sock,timeout", r[2])
    assert.equal("_closed,class,inner_sock,timeout", r[3])
  end)
end)
