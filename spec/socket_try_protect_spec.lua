-- cosock.socket.try / newtry / protect: Lua versions (a task may yield inside
-- them) that behave as cosock 0.2.0's, except that protect gives nil and the
-- try's message for a try failure, as LuaSocket's protect (cosock 0.2.0 gave a
-- lone nil, losing the message), re-raises other errors with error(e, 3) from a tail call (so a
-- string gets the position of the protected function's caller's caller), and
-- newtry ignores a finalizer that is not a function.

local cosock = require "cosock"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local socket = cosock.socket
local pack = net.pack

-- pcall(f) -> the error value, asserting that f raised.
local function raised(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end

describe("cosock.socket try / newtry / protect", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("try", function()
    it("returns all its arguments unless the first is nil; false does not raise", function()
      assert.same({ n = 3, 1, 2, 3 }, pack(socket.try(1, 2, 3)))
      assert.same({ n = 2, false, "msg" }, pack(socket.try(false, "msg")))
      assert.same({ n = 3, "a", nil, nil }, pack(socket.try("a", nil, nil)))
    end)

    it("raises a table holding its second argument, which prints as a plain table", function()
      local e = raised(socket.try, nil, "boom", "ignored")
      assert.equal("table", type(e))
      assert.equal("boom", e[1])
      assert.equal("table", type(getmetatable(e)))
      assert.matches("^table: ", tostring(e))
    end)

    it("with no arguments raises too", function()
      local e = raised(socket.try)
      assert.equal("table", type(e))
      assert.is_nil(e[1])
    end)
  end)

  describe("protect", function()
    it("returns the function's values, nils included", function()
      local f = socket.protect(function(a, b) return a, b, nil end)
      assert.same({ n = 3, 1, 2, nil }, pack(f(1, 2)))
    end)

    it("gives nil and the try's message for a failed try, as LuaSocket's protect", function()
      assert.same({ n = 2, nil, "msg" }, pack(socket.protect(function() socket.try(nil, "msg") end)()))
      assert.same({ n = 2, nil, 5 }, pack(socket.protect(function() socket.try(nil, 5) end)()))
      assert.same({ n = 2, nil, nil }, pack(socket.protect(function() socket.try(nil) end)()))
      local nested = socket.protect(function()
        return socket.protect(function() socket.try(nil, "inner") end)()
      end)
      assert.same({ n = 2, nil, "inner" }, pack(nested()))
    end)

    it("re-raises a string error with the position of its caller's caller", function()
      local f = socket.protect(function() error("flat", 0) end)
      local function caller() f() end
      local line
      local function top()
        line = debug.getinfo(1, "l").currentline + 1
        caller()
      end
      local e = raised(top)
      assert.equal(debug.getinfo(1, "S").short_src .. ":" .. line .. ": flat", e)
    end)

    it("re-raises an error that already has a position with a second one in front", function()
      local f = socket.protect(function() error("boom") end)
      local function caller() local _ = f() end
      local line
      local function top()
        line = debug.getinfo(1, "l").currentline + 1
        caller()
      end
      local e = raised(top)
      local src = debug.getinfo(1, "S").short_src:gsub("%p", "%%%0")
      assert.matches("^" .. src .. ":" .. line .. ": " .. src .. ":%d+: boom$", e)
    end)

    it("re-raises as it is when the caller's caller is a C function", function()
      local f = socket.protect(function() error("flat", 0) end)
      local outer_ok, ok, e = pcall(pcall, f) -- f's caller's caller: the outer pcall
      assert.is_true(outer_ok)
      assert.is_false(ok)
      assert.equal("flat", e)
    end)

    it("re-raises other error values unchanged", function()
      local tbl = {}
      assert.is_true(rawequal(tbl, raised(socket.protect(function() error(tbl) end))))
      assert.is_nil(raised(socket.protect(function() error() end)))
      -- (a number stays a number on every Lua: before 5.3 error() would put
      -- a position in front of it as of a string; protect does not ask it to)
      assert.equal(42, raised(socket.protect(function() error(42, 0) end)))
    end)

    it("raises 'attempt to call' for a non-function, when called", function()
      local f = socket.protect(42)
      assert.matches("attempt to call a number value", raised(f), 1, true)
    end)
  end)

  describe("newtry", function()
    it("calls its finalizer, without arguments, once before raising", function()
      local calls, args = 0, nil
      local try = socket.newtry(function(...) calls = calls + 1; args = select("#", ...) end)
      local f = socket.protect(function() try(1); try(nil, "x"); error("not reached") end)
      assert.same({ n = 2, nil, "x" }, pack(f()))
      assert.equal(1, calls)
      assert.equal(0, args)
    end)

    it("ignores a finalizer that is not a function", function()
      for _, v in ipairs { 42, "str", {}, true } do
        local f = socket.protect(function() socket.newtry(v)(nil, "x") end)
        assert.same({ n = 2, nil, "x" }, pack(f()), type(v))
      end
    end)

    it("lets an error in the finalizer through instead of the try's", function()
      local f = socket.protect(function() socket.newtry(function() error({ "fin" }) end)(nil, "x") end)
      assert.same({ "fin" }, raised(f))
    end)
  end)

  describe("in a task", function()
    it("may yield inside protect, try and a finalizer", function()
      local r = {}
      cosock.spawn(function()
        local try = socket.newtry(function()
          socket.sleep(0) -- yields inside the finalizer
          r.finalized = true
        end)
        local f = socket.protect(function(a)
          socket.sleep(0.001)
          r.before = a
          local v = try(socket.select(nil, nil, 0)) -- nil: timeout
          r.unreached = v
        end)
        r.result = pack(f("arg"))
        r.ok = pack(socket.protect(function() socket.sleep(0) return "after", 2 end)())
        -- (compat.pcall: PUC 5.1's own pcall cannot be waited in; protect's can)
        r.err = compat.pack(compat.pcall(socket.protect(function() socket.sleep(0) error({ "late" }) end)))
      end, "yielder")
      net.run()
      assert.equal("arg", r.before)
      assert.is_true(r.finalized)
      assert.is_nil(r.unreached)
      assert.same({ n = 2 }, r.result) -- try(nil, nil, "timeout"): its message is nil
      assert.same({ n = 2, "after", 2 }, r.ok)
      assert.is_false(r.err[1])
      assert.same({ "late" }, r.err[2])
    end)

    it("a channel receive that times out inside protect gives nil, 'timeout'", function()
      local r
      cosock.spawn(function()
        local _, rx = cosock.channel.new()
        rx:settimeout(0.001)
        r = pack(socket.protect(function() return socket.try(rx:receive()) end)())
      end, "receiver")
      net.run()
      assert.same({ n = 2, nil, "timeout" }, r)
    end)
  end)
end)
