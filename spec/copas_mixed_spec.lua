-- cosock.copas (doc/copas.md): copas 4.11's API on the cosock-native loop,
-- with copas threads and cosock tasks in one program. Each case gets a
-- fresh copy of the module (as copas's own tests reload copas) and leaves
-- the loop empty. No case waits longer than a few hundredths of a second.

local cosock = require "cosock"
local core = require "cosock.core"
local socket = require "socket"

local function fresh()
  for k in pairs(package.loaded) do
    if k == "cosock.copas" or k:find("^cosock%.copas%.") then package.loaded[k] = nil end
  end
  return require "cosock.copas"
end

-- a listening LuaSocket server on a free port: server, port
local function listener()
  local s = assert(socket.bind("127.0.0.1", 0))
  local _, port = s:getsockname()
  return s, port
end

describe("cosock.copas", function()
  local copas
  before_each(function()
    cosock.reset()
    copas = fresh()
  end)
  after_each(function()
    cosock.reset()
  end)

  it("runs copas threads and cosock tasks on one loop, talking over a channel", function()
    local tx, rx = cosock.channel.new()
    local got = {}
    cosock.spawn(function()
      for i = 1, 3 do tx:send(i) end
      tx:send(nil)
    end, "cosock producer")
    copas.loop(function()
      copas.addthread(function()
        while true do
          local v = rx:receive()
          if v == nil then break end
          got[#got + 1] = v
          copas.pause(0.001)
        end
      end)
    end)
    assert.are.same({ 1, 2, 3 }, got)
    assert.is_false(copas.running)
  end)

  it("keeps the loop going while cosock tasks remain after the copas threads ended", function()
    local order = {}
    cosock.spawn(function()
      cosock.socket.sleep(0.01)
      order[#order + 1] = "cosock"
    end, "late cosock task")
    copas.loop(function() order[#order + 1] = "copas" end)
    assert.are.same({ "copas", "cosock" }, order)
  end)

  it("lets a cosock task wake a copas thread (pauseforever / wakeup)", function()
    local co, woke
    co = copas.addthread(function()
      copas.pauseforever()
      woke = true
    end)
    cosock.spawn(function()
      cosock.socket.sleep(0.005)
      copas.wakeup(co)
    end, "waker")
    copas.loop()
    assert.is_true(woke)
    assert.are.equal("dead", coroutine.status(co))
  end)

  it("ends the loop when only threads sleeping without a time are left", function()
    local t = copas.addthread(function() copas.pauseforever() end)
    copas.loop()
    assert.is_true(copas.finished())
    assert.are.equal("suspended", coroutine.status(t))
  end)

  it("serves an addserver echo to copas clients, the handler feeding a cosock task", function()
    local server, port = listener()
    local tx, rx = cosock.channel.new()
    local seen, replies = {}, {}
    copas.addserver(server, copas.handler(function(skt)
      while true do
        local line = skt:receive()
        if not line then break end
        tx:send(line)
        skt:send(line .. "\n")
      end
    end))
    cosock.spawn(function()
      for _ = 1, 4 do
        local v = rx:receive()
        seen[#seen + 1] = v
      end
    end, "collector")
    for c = 1, 2 do
      copas.addthread(function()
        local skt = copas.wrap(socket.tcp())
        assert(skt:connect("127.0.0.1", port))
        for i = 1, 2 do
          assert(skt:send(("c%d-%d\n"):format(c, i)))
          local r = skt:receive() -- (not in the index expression: two threads interleave)
          replies[#replies + 1] = r
        end
        skt:close()
        if #replies == 4 then copas.removeserver(server) end
      end)
    end
    copas.loop()
    table.sort(seen); table.sort(replies)
    assert.are.same({ "c1-1", "c1-2", "c2-1", "c2-2" }, seen)
    assert.are.same(seen, replies)
  end)

  it("times out a receive as copas does (whole call), and closing wakes a waiting thread", function()
    local server, port = listener()
    local results = {}
    copas.addserver(server, function(skt)
      copas.removeserver(server)
      copas.pauseforever() -- sends nothing, never closes
    end)
    copas.addthread(function()
      local skt = copas.wrap(socket.tcp())
      assert(skt:connect("127.0.0.1", port))
      skt:settimeout(0.01)
      results.timeout = { skt:receive() }
      skt:settimeout(1) -- (a guard: a close that does not wake gives "timeout")
      copas.addthread(function()
        copas.pause(0.005)
        skt:close()
      end)
      results.closed = { skt:receive() }
    end)
    copas.loop()
    assert.are.same({ nil, "timeout", "" }, results.timeout)
    assert.are.equal("closed", results.closed[2])
  end)

  it("gives the error of a thread to its copas error handler, with its name", function()
    local msg, name
    copas.loop(function()
      copas.addnamedthread("failing", function()
        copas.seterrorhandler(function(m, co)
          msg, name = m, copas.getthreadname(co)
        end)
        error("boom")
      end)
    end)
    assert.matches("boom", msg)
    assert.are.equal("failing", name)
  end)

  it("ends a thread that yields by itself with copas's error", function()
    local msg
    copas.seterrorhandler(function(m) msg = m end, true)
    copas.loop(function()
      coroutine.yield()
    end)
    assert.matches("user-code cannot yield to Copas", msg, 1, true)
  end)

  it("runs copas.timeout callbacks and counts them", function()
    local fired
    copas.loop(function()
      copas.timeout(0.005, function(co) fired = co end)
      assert.are.equal(1, copas.gettimeouts())
      copas.pause(0.02)
    end)
    assert.is_not_nil(fired)
    assert.are.equal(0, copas.gettimeouts())
  end)

  it("has lock, semaphore, queue and future working across threads", function()
    local out = {}
    copas.loop(function()
      local q = copas.queue.new()
      q:add_worker(function(item) out[#out + 1] = item end)
      for i = 1, 3 do q:push(i) end
      local lock = copas.lock.new(0.05)
      assert(lock:get())
      local f = copas.future.addthread(function()
        local _, err = lock:get(0.005)
        return err
      end)
      local ok, err = f:get()
      assert.is_true(ok)
      assert.are.equal("timeout", err)
      lock:release()
      local sema = copas.semaphore.new(2, 0, 5) -- (a guard: the giver runs at once)
      copas.addthread(function() sema:give(2) end)
      assert.is_true(sema:take(2))
      assert(q:finish(5)) -- (a guard: it returns once the worker took all three)
    end)
    assert.are.same({ 1, 2, 3 }, out)
  end)

  it("ends the loop when cosock.stop() took every thread away", function()
    local server = assert(socket.bind("127.0.0.1", 0))
    copas.addserver(server, function() end)
    copas.addthread(function() copas.pause(10) end)
    copas.addthread(function()
      copas.pause(0.001)
      cosock.stop()
    end)
    copas.loop()
    assert.is_true(copas.finished())
    server:close()
  end)

  it("runs examples/copas_echo.lua as its header says", function()
    local saved = package.loaded.copas
    local out, ok, err = require("spec.support.loop").capture(dofile, "examples/copas_echo.lua")
    package.loaded.copas = saved
    for k in pairs(package.preload) do
      if k == "copas" or k:find("^copas%.") then package.preload[k] = nil end
    end
    assert(ok, err)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    table.sort(lines) -- (the logger and the client interleave)
    assert.are.same({ "done", "echoed: one", "echoed: three", "echoed: two",
                      "server saw: one", "server saw: three", "server saw: two" }, lines)
  end)

  it("is what require 'copas' gives after install()", function()
    local saved = package.loaded.copas
    local m = copas.install()
    assert.are.equal(m, require("copas"))
    assert.are.equal(m.lock, require("copas.lock"))
    package.loaded.copas, package.loaded["copas.lock"] = saved, nil
    for k in pairs(package.preload) do
      if k == "copas" or k:find("^copas%.") then package.preload[k] = nil end
    end
  end)
end)
