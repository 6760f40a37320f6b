-- Without LuaSec everything but cosock.ssl loads and works; cosock.ssl raises an
-- error that says LuaSec is missing. The check runs in a child Lua process
-- whose require cannot find LuaSec (its searchers refuse "ssl" and "ssl.*"), so
-- it runs whether LuaSec is installed or not.

local lua = require "spec.support.interpreter"

local CHILD = [=[
package.path, package.cpath = %q, %q
local searchers = package.searchers or package.loaders -- (5.1: loaders)
for i, search in ipairs(searchers) do
  searchers[i] = function(name)
    if name == "ssl" or name:find("^ssl%%.") then
      return "\n\tno module '" .. name .. "' (LuaSec hidden by the spec)"
    end
    return search(name)
  end
end

local cosock = require "cosock"
local tx, rx = cosock.channel.new()
rx:settimeout(5)
local got
cosock.spawn(function()
  local srv = assert(cosock.socket.bind("127.0.0.1", 0))
  srv:settimeout(5)
  local _, port = srv:getsockname()
  cosock.spawn(function()
    local s = assert(srv:accept())
    s:settimeout(5)
    assert(s:send(assert(s:receive()):upper() .. "\n"))
    s:close()
    srv:close()
  end, "server")
  local c = assert(cosock.socket.connect("127.0.0.1", port))
  c:settimeout(5)
  assert(c:send("ping\n"))
  tx:send(assert(c:receive()))
  c:close()
end, "client")
cosock.spawn(function() got = rx:receive() end, "collector")
cosock.run()
print("round trip:", got)
print("modules:", package.loaded.ssl == nil and "no ssl" or "ssl loaded",
      type(require "cosock.socket.http"), type(cosock.asyncify("socket.url")))
local function err(fn) local ok, e = pcall(fn); return ok and "no error" or e end
print("first:", err(function() return cosock.ssl end))
print("again:", err(function() return cosock.ssl end))
print("require:", err(function() return require "cosock.ssl" end))
]=]

describe("without LuaSec", function()
  local out

  setup(function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(CHILD:format(package.path, package.cpath))
    f:close()
    local p = io.popen(lua .. " " .. script .. " 2>&1")
    out = p:read("*a")
    p:close()
    os.remove(script)
  end)

  local function line(label) return out:match(label .. ":\t([^\n]*)") end

  it("cosock loads, and its tasks, sockets and channels work", function()
    assert.equal("PING", line("round trip"), out)
    assert.equal("no ssl\ttable\ttable", line("modules"), out)
  end)

  it("cosock.ssl raises an error naming LuaSec, every time it is asked for", function()
    local first = line("first")
    assert.matches("^cosock.ssl needs LuaSec %(the Lua module 'ssl'; Debian package lua%-sec, rock luasec%): " ..
                   "module 'ssl' not found:", first, 1)
    assert.matches("LuaSec hidden by the spec", out)
    assert.equal(first, line("again"))
    assert.equal(first, line("require"))
  end)
end)
