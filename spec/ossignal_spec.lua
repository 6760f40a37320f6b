-- cosock.ossignal: the operating system's signals as messages of a receiver.
-- The signals are sent by kill(1) to a child interpreter (this spec's Lua
-- with its paths), which prints what its tasks receive; every wait in the
-- child has a limit (its own deadline task), and the child's run is bounded
-- by timeout(1) as well. What needs no signal runs here.

local cosock = require "cosock"
local L = require "spec.support.loop"

-- The bits of the blocked-signal mask (/proc/self/status's SigBlk), as hex.
local function sigblk()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s:match("SigBlk:%s*(%x+)")
end

-- Starts source in a child; returns a reader of its lines and a closer.
local function child(source)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath),
          "io.stdout:setvbuf('line')\n",
          "local PID = io.open('/proc/self/stat'):read('*l'):match('^(%d+)')\n",
          source)
  f:close()
  local lua = require "spec.support.interpreter"
  local p = io.popen("timeout 30 " .. lua .. " " .. script .. " 2>&1")
  return function() return p:read("*l") end,
         function() p:close(); os.remove(script) end
end

local function kill(sig, pid)
  assert(os.execute("kill -" .. sig .. " " .. pid))
end

describe("cosock.ossignal", function()
  before_each(function()
    cosock.reset()
  end)

  it("is cosock.ossignal and require 'cosock.ossignal', loaded on first use", function()
    assert.equal(require("cosock.ossignal"), cosock.ossignal)
    assert.not_equal(cosock.signal, cosock.ossignal)
  end)

  it("receives signals sent while the loop sleeps, in a task, by name", function()
    local line, close = child([[
      local cosock = require "cosock"
      local rx = cosock.ossignal.receiver("TERM", "SIGHUP", "INT", "USR1", "USR2")
      rx:settimeout(10)
      cosock.spawn(function()
        print("ready " .. PID)
        for _ = 1, 5 do print("got", rx:receive()) end
        rx:close()
      end, "signals")
      cosock.run()
      print("done")
    ]])
    local pid = assert(line():match("^ready (%d+)$"))
    local got = {}
    for _, sig in ipairs { "HUP", "TERM", "INT", "USR1", "USR2" } do
      kill(sig, pid)
      got[#got + 1] = line()
    end
    assert.same({ "got\tHUP", "got\tTERM", "got\tINT", "got\tUSR1", "got\tUSR2" }, got)
    assert.equal("done", line())
    close()
  end)

  it("receives a signal sent while other tasks run, in select and in cosock.op", function()
    local line, close = child([[
      local cosock = require "cosock"
      local op = require "cosock.op"
      local rx = cosock.ossignal.receiver("USR1")
      local stop = false
      cosock.spawn(function()                    -- busy: yields, never sleeps
        local n = 0
        while not stop and n < 1e7 do n = n + 1; cosock.socket.sleep(0) end
        print("busy task stopped by the signal: " .. tostring(stop))
      end, "busy")
      cosock.spawn(function()
        print("ready " .. PID)
        local r = cosock.socket.select({ rx }, nil, 10)
        print("select:", r and r[1] == rx)
        print("receive:", rx:receive())
        stop = true
        print("ready again")
        local name = op.choice(op.readable(rx):wrap(function(x) return x:receive() end),
                               op.sleep(10):wrap(function() return "op timeout" end)):perform()
        print("op:", name)
        rx:close()
      end, "signals")
      cosock.run()
    ]])
    local pid = assert(line():match("^ready (%d+)$"))
    kill("USR1", pid)
    assert.equal("select:\ttrue", line())
    assert.equal("receive:\tUSR1", line())
    assert.equal("ready again", line())
    kill("USR1", pid)
    local rest = { line(), line() }              -- (the busy task ends when it is next resumed)
    table.sort(rest)
    assert.same({ "busy task stopped by the signal: true", "op:\tUSR1" }, rest)
    close()
  end)

  it("receives SIGCHLD when a child process ends", function()
    local line, close = child([[
      local cosock = require "cosock"
      local rx = cosock.ossignal.receiver("CHLD")
      rx:settimeout(10)
      cosock.spawn(function()
        os.execute("true")
        print("got", rx:receive())
      end)
      cosock.run()
    ]])
    assert.equal("got\tCHLD", line())
    close()
  end)

  it("gives the signals back on close and on collection: the mask is as it was", function()
    local before = sigblk()
    if before == nil then
      print("ossignal_spec: no /proc/self/status here: the mask is not checked")
      return
    end
    local rx = cosock.ossignal.receiver("USR2", "WINCH")
    assert.not_equal(before, sigblk())
    local rx2 = cosock.ossignal.receiver("USR2")    -- held twice: one close keeps it
    rx:close()
    assert.not_equal(before, sigblk())
    rx2:close()
    assert.equal(before, sigblk())
    rx:close()                                      -- (twice: nothing)
    cosock.ossignal.receiver("HUP")                 -- dropped at once
    collectgarbage()
    collectgarbage()
    assert.equal(before, sigblk())
  end)

  it("gives nil, 'closed' to a task waiting when the receiver closes, and after", function()
    local rx = cosock.ossignal.receiver("USR2")
    local r
    cosock.spawn(function() r = { rx:receive() } end, "waiter")
    cosock.spawn(function() rx:close() end, "closer")
    cosock.run()
    assert.same({ nil, "closed" }, r)
    assert.same({ nil, "closed" }, { rx:receive() })
    L.assert_clean()
  end)

  it("times out: settimeout(t) in a task, settimeout(0) anywhere", function()
    local rx = cosock.ossignal.receiver("USR2")
    rx:settimeout(0)
    assert.same({ nil, "timeout" }, { rx:receive() })
    local r
    rx:settimeout(0.01)
    cosock.spawn(function() r = { rx:receive() } end)
    cosock.run()
    assert.same({ nil, "timeout" }, r)
    rx:close()
  end)

  it("rejects what is not a signal it knows, and a receive outside a task that would wait", function()
    local R = cosock.ossignal.receiver
    assert.has_error(function() R() end, "cosock.ossignal.receiver: no signal named")
    assert.has_error(function() R("TERM", "KILL") end,
      "bad argument #2 to 'receiver' (unknown signal 'KILL': INT, TERM, HUP, QUIT, USR1, USR2, CHLD, WINCH, ALRM or PIPE expected)")
    assert.has_error(function() R(15) end,
      "bad argument #1 to 'receiver' (unknown signal '15': INT, TERM, HUP, QUIT, USR1, USR2, CHLD, WINCH, ALRM or PIPE expected)")
    assert.has_error(function() R({}) end,
      "bad argument #1 to 'receiver' (unknown signal 'table': INT, TERM, HUP, QUIT, USR1, USR2, CHLD, WINCH, ALRM or PIPE expected)")
    local rx = R("USR2")
    assert.has_error(function() rx:receive() end,
      "cosock.ossignal: receive must be called from a task (or with settimeout(0))")
    assert.has_error(function() rx:settimeout("x") end,
      "bad argument #1 to 'settimeout' (number or nil expected, got string)")
    assert.has_error(function() rx:setwaker("sendr", function() end) end, "unsupported wake kind: sendr")
    rx:setwaker("recvr", function() end)
    assert.has_error(function() rx:setwaker("recvr", function() end) end,
      "recvr waker already set, sockets can only block one thread per waker kind")
    rx:setwaker("recvr", nil)
    rx:close()
  end)
end)
