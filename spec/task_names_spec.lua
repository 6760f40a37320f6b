-- Errors name the task they are about (issue 22; doc/reference.md,
-- "cosock.run", "Errors that name the task"): cosock's first line stays as it
-- is, the next line says which task (and, for a wait, which object), and a
-- wait outside any task says to spawn one.

local cosock = require "cosock"
local L = require "spec.support.loop"
local V = require "spec.support.version"
local socket = cosock.socket

local SPEC = debug.getinfo(1, "S").short_src

-- The line of the caller of the function that calls here.
local function line_here()
  return debug.getinfo(2, "l").currentline
end

local function escape(s) return (s:gsub("%p", "%%%0")) end

describe("a task's error", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.set_error_handler(nil) cosock.reset() end)

  it("keeps cosock's first line and ends its traceback with the task's name and spawn site", function()
    local line = line_here() + 1
    cosock.spawn(function() error("boom") end, "worker")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.matches("^[^\n]*cosock%.lua:%d+: " .. escape(SPEC) .. ":%d+: boom\nstack traceback:\n", err)
    assert.matches("\n\t%(in task 'worker', spawned at " .. escape(SPEC .. ":" .. line) .. "%)$",
                   L.loop_error(err))
  end)

  it("says 'an unnamed task' for a task without a name", function()
    local line = line_here() + 1
    cosock.spawn(function() error("no name") end)
    local _, err = pcall(cosock.run)
    assert.matches("\n\t%(in an unnamed task, spawned at " .. escape(SPEC .. ":" .. line) .. "%)$", err)
  end)

  it("names the task for error() with no value too", function()
    cosock.spawn(function() error() end, "quiet")
    local _, err = pcall(cosock.run)
    assert.matches("^[^\n]*stack traceback:\n", err)
    assert.matches("\n\t%(in task 'quiet', spawned at ", err)
  end)

  it("the error handler and join see the same text", function()
    local seen
    cosock.set_error_handler(function(e) seen = e end)
    local h = cosock.spawn(function() error("joined") end, "joinee")
    local joined
    cosock.spawn(function() joined = select(2, h:join()) end, "joiner")
    cosock.run()
    assert.matches("\n\t%(in task 'joinee', spawned at ", seen)
    assert.equal(seen, joined)
  end)

  it("a non-string error value stays the same object", function()
    local obj = {}
    cosock.spawn(function() error(obj) end, "thrower")
    local _, err = pcall(cosock.run)
    assert.equal(obj, err)
  end)
end)

describe("a wait's error", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("a second receiver on a socket: cosock's line, then the task and the socket", function()
    local srv = assert(socket.bind("127.0.0.1", 0))
    local _, port = srv:getsockname()
    local c = socket.tcp()
    cosock.spawn(function()
      c:settimeout(5)
      assert(c:connect("127.0.0.1", port))
      srv:settimeout(5)
      local s = assert(srv:accept())
      cosock.spawn(function() c:receive() end, "first")
      cosock.spawn(function() socket.sleep(0.01) c:receive() end, "second")
      socket.sleep(5)
      s:close()
    end, "setup")
    local ok, err = pcall(cosock.run)
    c:close()
    srv:close()
    assert.is_false(ok)
    assert.matches("^[^\n]*recvr waker already set, sockets can only block one thread per waker kind\n"
                   .. "%(task 'second' waiting on tcp{client} table: [^\n]*%)$", err)
  end)

  it("a raw LuaSocket object: 'non-wakeable socket' alone on the first line, then the task", function()
    local raw = require("socket").tcp()
    cosock.spawn(function() socket.select({ raw }, nil, 1) end, "odd")
    local _, err = pcall(cosock.run)
    raw:close()
    assert.matches("^[^\n]*non%-wakeable socket\n%(task 'odd' yielded a userdata without setwaker in its recvt%)$",
                   err)
  end)
end)

describe("a wait outside any task", function()
  local waits = {
    ["socket.sleep"] = function() socket.sleep(1) end,
    ["socket.select"] = function() socket.select(nil, nil, 1) end,
    ["channel receive"] = function() local _, rx = cosock.channel.new() rx:receive() end,
    ["channel send (rendezvous)"] = function() local tx = cosock.channel.new(0) tx:send(1) end,
    ["timer.sleep_until"] = function() cosock.timer.sleep_until(cosock.timer.now() + 10) end,
    ["tcp accept"] = function()
      local srv = assert(socket.bind("127.0.0.1", 0))
      local ok, err = pcall(srv.accept, srv)
      srv:close()
      if not ok then error(err, 0) end
    end,
  }
  for name, fn in pairs(waits) do
    it(name .. " says to call it from a task spawned with cosock.spawn", function()
      local ok, err = pcall(fn)
      assert.is_false(ok)
      assert.matches(V.WAIT_OUTSIDE, err, 1, true)
      assert.equal(0, cosock.stats().tasks)
    end)
  end

  it("inside a coroutine of the program's own, a wait still yields to its resumer", function()
    local co = coroutine.create(function() socket.sleep(7) end)
    local ok, recvt, sendt, timeout = coroutine.resume(co)
    assert.same({ true, nil, nil, 7 }, { ok, recvt, sendt, timeout })
  end)
end)
