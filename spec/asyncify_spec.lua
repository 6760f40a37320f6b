-- cosock.asyncify: load a module so that `require "socket"` / `require "ssl"` in
-- it, and in the modules it requires, give cosock.socket / cosock.ssl.
-- The test modules are written into a temporary directory at spec time.

local cosock = require "cosock"
local luasocket = require "socket"
local net = require "spec.support.net"
local V = require "spec.support.version"

local asyncify = cosock.asyncify

local dir, old_path
local counter = 0

-- Write module `name` (dots become directories) with `src` into the temp dir.
local function module(name, src)
  local path = dir .. "/" .. name:gsub("%.", "/") .. ".lua"
  local sub = path:match("^(.*)/[^/]+$")
  os.execute("mkdir -p '" .. sub .. "'")
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
end

-- A fresh module-name prefix per test, so the asyncify cache never hides a bug.
local function fresh()
  counter = counter + 1
  return "h1async" .. counter
end

describe("cosock.asyncify", function()
  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 700 '" .. dir .. "'"))
    old_path = package.path
    package.path = dir .. "/?.lua;" .. package.path
  end)

  teardown(function()
    package.path = old_path
    os.execute("rm -rf '" .. dir .. "'")
  end)

  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  it("is the module cosock.asyncify, a function", function()
    assert.equal("function", type(asyncify))
    assert.is_true(rawequal(asyncify, require "cosock.asyncify"))
  end)

  it("asyncify('socket') is a fresh, cached copy of cosock.socket", function()
    local s = asyncify("socket")
    assert.is_false(rawequal(s, cosock.socket))
    assert.is_false(rawequal(s, luasocket))
    assert.is_true(rawequal(s.tcp, cosock.socket.tcp))
    assert.is_true(rawequal(s.select, cosock.socket.select))
    assert.is_true(rawequal(s, asyncify("socket")))
    -- its select yields: outside any task that is an error (Lua's words,
    -- then what to do instead)
    local ok, err = pcall(s.select, {}, {}, 0.1)
    assert.is_false(ok)
    assert.matches(V.WAIT_OUTSIDE, err, 1, true)
  end)

  it("a module requiring socket gets cosock.socket; plain require still gets LuaSocket", function()
    local p = fresh()
    module(p .. ".one", [[
      local socket = require "socket"
      return { socket = socket, string = require "string" }
    ]])
    local one = asyncify(p .. ".one")
    assert.is_true(rawequal(one.socket, cosock.socket))
    assert.is_true(rawequal(one.string, string))
    local plain = require(p .. ".one")
    assert.is_true(rawequal(plain.socket, luasocket))
    assert.is_false(rawequal(plain, one))
    assert.is_true(rawequal(one, asyncify(p .. ".one"))) -- cached
  end)

  it("works through modules required in turn (nested)", function()
    local p = fresh()
    module(p .. ".leaf", [[
      return { socket = require "socket", tbl = require "table" }
    ]])
    module(p .. ".mid", [[
      local leaf = require "]] .. p .. [[.leaf"
      return { leaf = leaf }
    ]])
    local mid = asyncify(p .. ".mid")
    assert.is_true(rawequal(mid.leaf.socket, cosock.socket))
    assert.is_true(rawequal(mid.leaf.tbl, table))
    assert.is_true(rawequal(mid.leaf, asyncify(p .. ".leaf")))
  end)

  it("a module requiring ssl, in turn, gets cosock.ssl #luasec", function()
    local p = fresh()
    module(p .. ".leaf", [[ return { ssl = require "ssl" } ]])
    module(p .. ".mid", [[ return { leaf = require "]] .. p .. [[.leaf" } ]])
    local mid = asyncify(p .. ".mid")
    assert.is_true(rawequal(mid.leaf.ssl, cosock.ssl))
  end)

  it("returns standard-library modules as they are", function()
    assert.is_true(rawequal(table, asyncify("table")))
    assert.is_true(rawequal(string, asyncify("string")))
    assert.is_true(rawequal(_G, asyncify("_G")))
  end)

  it("returns the last searcher's message for a module that cannot be found, as cosock does", function()
    local r = asyncify("h1.no.such.module")
    local searchers = V.searchers
    assert.equal("string", type(r))
    assert.equal(searchers[#searchers]("h1.no.such.module"), r)
  end)

  it("a require of a missing module inside an asyncified module raises, like require", function()
    local p = fresh()
    module(p .. ".broken", [[ return require "h1.missing.dependency" ]])
    local ok, err = pcall(asyncify, p .. ".broken")
    assert.is_false(ok)
    assert.matches("h1.missing.dependency", err, 1, true)
  end)

  it("globals written by asyncified modules stay in their shared environment, as in cosock; reads see _G", function()
    local p = fresh()
    module(p .. ".glob", [[
      H1_ASYNC_GLOBAL = "set"
      return { print = print, G = _G, own = H1_ASYNC_GLOBAL }
    ]])
    module(p .. ".reader", [[ return { seen = H1_ASYNC_GLOBAL } ]])
    local g = asyncify(p .. ".glob")
    assert.is_nil(rawget(_G, "H1_ASYNC_GLOBAL"))
    assert.equal("set", g.own)
    assert.equal("set", asyncify(p .. ".reader").seen) -- shared by every asyncified module
    assert.is_true(rawequal(g.print, print))
    assert.is_true(rawequal(g.G, _G))
  end)

  it("an asyncified module's sockets wait by yielding inside tasks", function()
    local p = fresh()
    module(p .. ".client", [[
      local socket = require "socket"
      local M = {}
      function M.fetch_line(port)
        local c = assert(socket.connect("127.0.0.1", port))
        c:settimeout(5)
        local line = c:receive()
        c:close()
        return line
      end
      return M
    ]])
    local client = asyncify(p .. ".client")
    local got
    cosock.spawn(function()
      local srv, port = net.listen()
      cosock.spawn(function() got = client.fetch_line(port) end, "client")
      local a = assert(srv:accept())
      cosock.socket.sleep(0.01)
      assert(a:send("from the server\n"))
      a:close(); srv:close()
    end, "server")
    net.run()
    assert.equal("from the server", got)
  end)

  it("leaves package.loaded alone even when a module registers itself there", function()
    local p = fresh()
    module(p .. ".selfreg", [[
      local M = { socket = require "socket" }
      package.loaded[...] = M
      return M
    ]])
    local a = asyncify(p .. ".selfreg")
    assert.is_true(rawequal(a.socket, cosock.socket))
    assert.is_nil(package.loaded[p .. ".selfreg"])
  end)
end)
