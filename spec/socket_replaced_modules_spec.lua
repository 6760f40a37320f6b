-- A program (or an asyncified module) may put cosock.socket in LuaSocket's
-- place: package.loaded.socket = cosock.socket. The modules cosock loads on
-- first use after that (socket.dns is cosock.dns, cosock.op's sources) must
-- still reach LuaSocket's own functions, not cosock.socket's: cosock.dns once
-- took cosock.socket.dns, itself, and loaded again until "too many C levels".
local cosock = require "cosock"
local csocket = require "cosock.socket"

describe("package.loaded.socket = cosock.socket", function()
  local saved

  -- Forgets the module `name` and cosock.socket's field `field` (so the next
  -- read loads it again), with socket replaced.
  local function replaced(name, field)
    saved = package.loaded.socket
    package.loaded[name] = nil
    if field then rawset(csocket, field, nil) end
    package.loaded.socket = csocket
  end

  after_each(function()
    package.loaded.socket = saved
  end)

  it("socket.dns loads and looks up outside a task (LuaSocket's resolver)", function()
    replaced("cosock.dns", "dns")
    local ok, dns = pcall(function() return csocket.dns end)
    assert.is_true(ok, tostring(dns))
    assert.equal(package.loaded["cosock.dns"], dns)
    assert.equal("127.0.0.1", (dns.toip("127.0.0.1")))
    assert.equal("string", type(dns.gethostname()))
  end)

  it("socket.dns looks up in a task", function()
    replaced("cosock.dns", "dns")
    local got
    cosock.spawn(function()
      got = { csocket.dns.toip("127.0.0.1") }
    end)
    cosock.run()
    assert.equal("127.0.0.1", got[1])
  end)

  it("cosock.op's readable polls with LuaSocket's select", function()
    replaced("cosock.op.sources")
    local ok, sources = pcall(require, "cosock.op.sources")
    assert.is_true(ok, tostring(sources))
    local server = assert(require("socket").bind("127.0.0.1", 0))
    local ready
    cosock.spawn(function()
      local op = require "cosock.op"
      local s = csocket.tcp()
      assert(s:connect(server:getsockname()))
      local peer = server:accept()
      peer:send("x")
      ready = op.perform(sources.readable(s))
      s:close()
      peer:close()
    end)
    cosock.run()
    server:close()
    assert.truthy(ready)
  end)
end)
