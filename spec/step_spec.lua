-- cosock.step([timeout]): one pass of run's loop, for a program that owns its
-- thread; and cosock.next_timeout(), when the next pass is due
-- (doc/reference.md, doc/embedding.md).

local cosock = require "cosock"
local L = require "spec.support.loop"
local socket = cosock.socket

describe("cosock.step", function()
  before_each(function()
    cosock.reset()
  end)

  it("returns false at once when nothing is spawned", function()
    assert.is_false(cosock.step())
    assert.is_false(cosock.step(5))
  end)

  it("runs one pass: a new task runs in the first step, what it wakes in the next", function()
    local log = {}
    cosock.spawn(function()
      log[#log + 1] = "a1"
      socket.sleep(0)                            -- (a zero timeout: due next pass)
      log[#log + 1] = "a2"
    end, "a")
    assert.equal(0, #log)
    assert.is_true(cosock.step())
    assert.same({ "a1" }, log)
    assert.is_false(cosock.step())
    assert.same({ "a1", "a2" }, log)
    L.assert_clean()
  end)

  it("waits for nothing by default: a sleeping task is still there after step()", function()
    local h = cosock.spawn(function() socket.sleep(30) end, "sleeper")
    assert.is_true(cosock.step())
    assert.is_true(cosock.step())
    assert.is_true(h:is_alive())
    h:cancel()
    assert.is_false(cosock.step())
  end)

  -- Steps until step returns false, at most limit of them; how many it took.
  local function steps_until_done(timeout, limit)
    for n = 1, limit do
      if not cosock.step(timeout) then return n end
    end
    error("still tasks after " .. limit .. " steps")
  end

  it("waits up to its timeout for a timer: a few steps end a sleeping task", function()
    local done = false
    cosock.spawn(function() socket.sleep(0.02); done = true end, "sleeper")
    assert.is_true(cosock.step(30))              -- resumes it, then waits for its timer
    assert.is_false(done)
    steps_until_done(30, 10)                     -- (a step that waited 0 s would need ~1e5)
    assert.is_true(done)
  end)

  it("takes math.huge as no limit", function()
    local done = false
    cosock.spawn(function() socket.sleep(0.01); done = true end)
    steps_until_done(math.huge, 10)
    assert.is_true(done)
  end)

  it("waits up to its timeout for a socket", function()
    local server = assert(socket.bind("127.0.0.1", 0))
    local _, port = server:getsockname()
    local got
    cosock.spawn(function()
      local c = assert(server:accept())
      got = c:receive("*l")
      c:close()
    end, "reader")
    local client = require("socket").connect("127.0.0.1", port)
    assert.truthy(client)
    client:send("hello\n")
    for _ = 1, 100 do
      if not cosock.step(5) then break end
    end
    client:close()
    server:close()
    assert.equal("hello", got)
    L.assert_clean()
  end)

  it("rejects a timeout that is not a non-negative number", function()
    assert.has_error(function() cosock.step("x") end,
      "bad argument #1 to 'step' (number or nil expected, got string)")
    assert.has_error(function() cosock.step({}) end,
      "bad argument #1 to 'step' (number or nil expected, got table)")
    assert.has_error(function() cosock.step(-1) end,
      "bad argument #1 to 'step' (timeout must not be negative or NaN)")
    assert.has_error(function() cosock.step(0 / 0) end,
      "bad argument #1 to 'step' (timeout must not be negative or NaN)")
    L.assert_loop_works()
  end)

  it("is refused from inside a task, with an error naming the task", function()
    local err
    cosock.spawn(function()
      local ok, e = pcall(cosock.step)
      assert(not ok)
      err = e
    end, "stepper")
    assert.is_false(cosock.step())
    assert.matches("cosock.step: called from inside task 'stepper' %(a task cannot step the loop that runs it%)", err)
    cosock.spawn(function() err = select(2, pcall(cosock.step, 1)) end, "in run")
    cosock.run()
    assert.matches("called from inside task 'in run'", err)
    L.assert_clean()
  end)

  it("is refused from an error handler while the loop runs", function()
    local err
    cosock.set_error_handler(function() err = select(2, pcall(cosock.step)) end)
    cosock.spawn(function() error("x") end)
    assert.is_false(cosock.step())
    assert.equal("cosock.step: the loop is already running", err)
  end)

  it("raises a task's error as run does, the task removed and the others kept", function()
    local other_ran = false
    cosock.spawn(function() error("boom") end, "bad")
    cosock.spawn(function() socket.sleep(0); other_ran = true end, "good")
    local ok, e = pcall(cosock.step)
    assert.is_false(ok)
    assert.matches("cosock%.lua:%d+: .*boom\nstack traceback:", e)
    assert.is_true(cosock.step())                -- "good" was requeued, runs now
    assert.is_false(cosock.step())
    assert.is_true(other_ran)
    local t = {}
    cosock.spawn(function() error(t) end)
    local ok2, e2 = pcall(cosock.step)
    assert.is_false(ok2)
    assert.equal(t, e2)
    L.assert_clean()
  end)

  it("gives a task's error to the error handler and goes on", function()
    local seen
    cosock.set_error_handler(function(err) seen = err end)
    cosock.spawn(function() error("handled") end, "bad")
    assert.is_false(cosock.step())
    assert.matches("handled", seen)
  end)

  it("with a limit, does not raise the stall: it returns true and code outside the loop may wake the task", function()
    local tx, rx = cosock.channel.new()
    local got
    cosock.spawn(function() got = rx:receive() end, "waiter")
    assert.is_true(cosock.step())                -- parks it: nothing in the loop can wake it
    assert.is_true(cosock.step(0.01))            -- sleeps its 10 ms, no error
    assert.is_nil(cosock.next_timeout())
    tx:send("from outside")
    assert.equal(0, cosock.next_timeout())
    assert.is_false(cosock.step())
    assert.equal("from outside", got)
  end)

  it("with no limit, raises the stall as run does (nothing could end the wait)", function()
    local out = require("spec.support.child").run([[
      local cosock = require "cosock"
      local _, rx = cosock.channel.new()
      cosock.spawn(function() rx:receive() end, "waiter")
      print("first step:", cosock.step())
      local ok, err = pcall(cosock.step, math.huge)
      print("no-limit step raised:", not ok)
      print(err)
    ]])
    assert.matches("first step:\ttrue", out, 1, true)
    assert.matches("DUMP STATE", out, 1, true)
    assert.matches("no-limit step raised:\ttrue", out, 1, true)
    assert.matches("cosock.lua:%d+: cosock tried to call socket.select with no sockets and no timeout", out)
    assert.matches("task 'waiter'", out, 1, true)
  end)

  it("interleaves with spawn, cancel, reset and run", function()
    local log = {}
    local h = cosock.spawn(function() socket.sleep(30); log[#log + 1] = "never" end, "long")
    assert.is_true(cosock.step())
    cosock.spawn(function() log[#log + 1] = "b" end, "b")
    assert.is_true(cosock.step())
    assert.same({ "b" }, log)
    h:cancel()
    assert.is_false(cosock.step())
    cosock.spawn(function() socket.sleep(30) end, "forgotten")
    assert.is_true(cosock.step())
    cosock.reset()
    assert.is_false(cosock.step())
    cosock.spawn(function() log[#log + 1] = "r" end)
    cosock.run()
    assert.same({ "b", "r" }, log)
    L.assert_clean()
  end)
end)

describe("cosock.next_timeout", function()
  before_each(function()
    cosock.reset()
  end)

  it("is nil when nothing is spawned", function()
    assert.is_nil(cosock.next_timeout())
  end)

  it("is 0 when a task is ready", function()
    cosock.spawn(function() end)
    assert.equal(0, cosock.next_timeout())
    cosock.run()
    assert.is_nil(cosock.next_timeout())
  end)

  it("is the time left to the earliest timer", function()
    local h = cosock.spawn(function() socket.sleep(5) end)
    cosock.step()
    local t = cosock.next_timeout()
    assert.is_true(t > 0 and t <= 5, tostring(t))
    h:cancel()
    assert.is_nil(cosock.next_timeout())
  end)

  it("is nil when tasks wait only on sockets or channels with no timeout", function()
    local server = assert(socket.bind("127.0.0.1", 0))
    cosock.spawn(function() server:accept() end, "acceptor")
    cosock.step()
    assert.is_nil(cosock.next_timeout())
    server:close()
    cosock.reset()
  end)
end)
