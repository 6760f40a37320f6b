-- Defects the probe of cosock.trace found (session 35): each case fails
-- without its fix. Time runs on cosock.sim's virtual clock.

local cosock = require "cosock"
local trace = require "cosock.trace"
local sim = require "cosock.sim"

-- The events of kind for the task named name.
local function of_named(events, kind, name)
  local id
  for _, e in ipairs(events) do
    if e.kind == "spawn" and e.name == name then id = e.task end
  end
  assert(id, "no task named " .. name)
  local out = {}
  for _, e in ipairs(events) do
    if e.kind == kind and e.task == id then out[#out + 1] = e end
  end
  return out
end

describe("cosock.trace (probe regressions)", function()
  before_each(function()
    trace.stop()
    cosock.reset()
  end)
  after_each(function()
    trace.stop()
    sim.off()
    cosock.reset()
  end)

  it("a scope's deadline wakes its task with the cause cancel (not timer)", function()
    sim.on({ seed = 1 })
    trace.start({ size = 256 })
    local res
    cosock.spawn(function()
      res = { cosock.scope.run({ timeout = 0.5 }, function(s)
        s:spawn(function() cosock.socket.sleep(10) end, "sleeper")
      end) }
    end, "owner")
    cosock.run()
    trace.stop()
    assert.same({ false, "timeout" }, res)
    local ev = trace.events()
    local wakes = of_named(ev, "wake", "sleeper")
    assert.equal(2, #wakes)
    assert.equal("cancel", wakes[2].cause)
    assert.equal(0, wakes[2].by)
    assert.equal("cancelled", of_named(ev, "end", "sleeper")[1].how)
    -- the task's own timeout, before the deadline, stays a timer
    trace.start({ size = 256 })
    cosock.spawn(function()
      cosock.scope.run({ timeout = 5 }, function(s)
        s:spawn(function() cosock.socket.sleep(0.1) end, "napper")
      end)
    end, "owner2")
    cosock.run()
    trace.stop()
    assert.equal("timer", of_named(trace.events(), "wake", "napper")[2].cause)
  end)
end)

describe("cosock.trace.start (probe regressions)", function()
  after_each(function()
    trace.stop()
    cosock.reset()
  end)

  it("raises on an unknown option (a misspelt size started a default trace)", function()
    local ok, err = pcall(trace.start, { sise = 100 })
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'cosock.trace.start' (unknown option \"sise\": size expected)", err, 1, true)
    assert.is_false(trace.on())
  end)
end)

describe("a traced deadlock (probe regressions)", function()
  after_each(function()
    trace.stop()
    cosock.reset()
  end)

  it("the stall is a note in the trace, and the summary shows its tasks waiting", function()
    trace.start({ size = 64 })
    local atx, arx = cosock.channel.new()
    local btx, brx = cosock.channel.new()
    cosock.spawn(function() btx:send(arx:receive()) end, "A")
    cosock.spawn(function() atx:send(brx:receive()) end, "B")
    local ok, err = pcall(cosock.run)
    trace.stop()
    assert.is_false(ok)
    assert.matches("waits on something that nothing can wake", err, 1, true)
    local ev = trace.events()
    local last = ev[#ev]
    assert.equal("note", last.kind)
    assert.equal("stall", last.what)
    assert.equal(0, last.task)
    assert.matches("task 'A' waits to receive on a channel; its sender is held by task 'B'", last.detail, 1, true)
    local path = os.tmpname()
    trace.save(path)
    local text = require("cosock.trace.summary").text(require("cosock.trace.file").read(path))
    os.remove(path)
    assert.matches("waiting   #1 A", text, 1, true)
    assert.matches("loop stall: every live task waits", text, 1, true)
  end)
end)

describe("a traced scope whose task fails (probe regressions)", function()
  after_each(function()
    trace.stop()
    sim.off()
    cosock.reset()
  end)

  it("the end event's error is the message without the traceback the scope adds", function()
    sim.on({ seed = 3 })
    trace.start({ size = 256 })
    local res
    cosock.spawn(function()
      res = { cosock.scope.run(function(s)
        s:spawn(function() cosock.socket.sleep(10) end, "sibling")
        s:spawn(function() cosock.socket.sleep(0.1); error("sibling fails") end, "failer")
      end) }
    end, "owner")
    cosock.run()
    trace.stop()
    assert.is_false(res[1])
    assert.matches("stack traceback:", res[2], 1, true) -- (the scope's error keeps it)
    local ev = trace.events()
    local fin = of_named(ev, "end", "failer")[1]
    assert.equal("raised", fin.how)
    assert.matches("^[^\n]*: sibling fails$", fin.error)
    local w = of_named(ev, "wake", "sibling")
    assert.equal("cancel", w[#w].cause)
    assert.equal(of_named(ev, "spawn", "failer")[1].task, w[#w].by)
    assert.equal("cancelled", of_named(ev, "end", "sibling")[1].how)
  end)
end)

describe("COSOCK_TRACE (probe regressions)", function()
  it("is saved when a step host ends with os.exit (no finalizer runs then)", function()
    local child = require "spec.support.child"
    local path = os.tmpname()
    child.run([[
      local cosock = require "cosock"
      cosock.spawn(function() end, "stepped")
      while cosock.step(0) do end
      os.exit(0)
    ]], "COSOCK_TRACE=" .. path .. " ")
    local f = io.open(path)
    local text = f and f:read("*a") or ""
    if f then f:close() end
    os.remove(path)
    assert.matches("\tspawn\t1\t0\tstepped\t", text, 1, true)
    assert.matches("\tend\t1\treturned\t-\n", text, 1, true)
  end)

  it("gives way to a trace the program starts itself (it raised 'a trace is on already')", function()
    local child = require "spec.support.child"
    local path = os.tmpname()
    local out = child.run([[
      local cosock = require "cosock"
      local trace = require "cosock.trace"
      print("start", pcall(trace.start, { size = 64 }))
      cosock.spawn(function() end, "own")
      cosock.run()
      print("second", pcall(trace.start))
    ]], "COSOCK_TRACE=" .. path .. " ")
    local f = io.open(path)
    local text = f and f:read("*a") or ""
    if f then f:close() end
    os.remove(path)
    assert.matches("start\ttrue", out)
    assert.matches("second\tfalse\tcosock.trace.start: a trace is on already", out)
    assert.matches("\nM\tsize\t64\n", text)
    assert.matches("\tspawn\t1\t0\town\t", text, 1, true)
  end)
end)

describe("cosock-trace's summary (probe regressions)", function()
  it("keeps a task whose name holds a newline or a tab on one line (escaped)", function()
    local tfile = require "cosock.trace.file"
    local text = require("cosock.trace.summary").text(tfile.parse(table.concat({
      "cosock-trace 1",
      "E\t0.0\tspawn\t1\t0\tbad\\tna\\nme\tx.lua:1",
      "E\t0.0\twake\t1\tspawn\t0\t-",
      "E\t0.0\trun\t1",
      "E\t0.5\tend\t1\treturned\t-",
    }, "\n") .. "\n", "t"))
    assert.matches("\n  [^\n]*returned  #1 bad\\tna\\nme %(x%.lua:1%)\n", text)
  end)
end)

describe("cosock.trace.mark (probe regressions)", function()
  after_each(function()
    trace.stop()
    cosock.reset()
  end)

  it("refuses a task id above 2147483647 (it was recorded negative: the saved file did not read back)", function()
    trace.start({ size = 16 })
    local ok, err = pcall(trace.mark, "k", "m", 2 ^ 31)
    assert.is_false(ok)
    assert.matches("bad argument #3 to 'cosock.trace.mark' (task id (an integer from 0 to 2147483647) or nil expected, got",
      err, 1, true)
    assert.is_true(trace.mark("k", "m", 2147483647))
    trace.stop()
    local path = os.tmpname()
    trace.save(path)
    local t = require("cosock.trace.file").read(path)
    os.remove(path)
    assert.equal(2147483647, t.events[#t.events].task)
  end)
end)

describe("a traced simulated exchange (probe regressions)", function()
  after_each(function()
    trace.stop()
    sim.off()
    cosock.reset()
  end)

  it("its socket waits are recv/send woken by readiness (they were 'other' woken by 'timer')", function()
    sim.on({ seed = 9, link = { latency = 0.01 } })
    trace.start({ size = 256 })
    local srv = assert(cosock.socket.bind("10.0.0.1", 80))
    local got
    cosock.spawn(function()
      local c = assert(srv:accept())
      assert(c:send(c:receive("*l") .. "!\n"))
      c:close()
    end, "server")
    cosock.spawn(function()
      local c = cosock.socket.tcp()
      assert(c:connect("10.0.0.1", 80))
      assert(c:send("hi\n"))
      got = c:receive("*l")
      c:close()
    end, "client")
    cosock.run()
    trace.stop()
    assert.equal("hi!", got)
    local ev = trace.events()
    local waits = of_named(ev, "wait", "server")
    assert.equal("recv", waits[1].what)
    assert.equal("sim 10.0.0.1:80", waits[1].detail)
    local wakes = of_named(ev, "wake", "server")
    assert.equal("ready", wakes[2].cause)
    for _, name in ipairs({ "server", "client" }) do
      for _, w in ipairs(of_named(ev, "wait", name)) do
        assert.is_true(w.what == "recv" or w.what == "send", name .. " waits on " .. tostring(w.what))
      end
    end
  end)
end)

describe("cosock.tasks.list under cosock.sim (probe regressions)", function()
  after_each(function()
    sim.off()
    cosock.reset()
  end)

  it("a wait on a simulated socket is recv in the trace's words (it was other)", function()
    local tasks = require "cosock.tasks"
    sim.on({ seed = 1 })
    local srv = assert(cosock.socket.bind("10.0.0.1", 80))
    local seen
    cosock.spawn(function() srv:accept() end, "server")
    cosock.spawn(function()
      cosock.socket.sleep(1)
      for _, t in ipairs(tasks.list()) do
        if t.name == "server" then seen = t end
      end
      srv:close()
    end, "looker")
    pcall(cosock.run)
    assert.equal("waiting", seen.state)
    assert.equal("recv", seen.what)
    assert.matches("^recv ", seen.waits)
  end)
end)

describe("a traced task that raises an odd value (probe regressions)", function()
  after_each(function()
    trace.stop()
    cosock.reset()
  end)

  it("an error whose __tostring raises is still told in the end event (it had no error)", function()
    trace.start({ size = 64 })
    cosock.spawn(function()
      error(setmetatable({}, { __tostring = function() error("no words") end }))
    end, "odd")
    pcall(cosock.run)
    trace.stop()
    local fin = of_named(trace.events(), "end", "odd")[1]
    assert.equal("raised", fin.how)
    assert.equal("(a table whose __tostring failed)", fin.error)
  end)
end)

describe("the trace readers' arguments (probe regressions)", function()
  -- (each raised 'attempt to index a nil value' from inside the module)
  local function err_of(f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    return tostring(err)
  end
  local TRACE = "(a trace {meta =, events =} or its model expected, got "

  it("a bad trace, opts or path names the function and the argument", function()
    local summary = require "cosock.trace.summary"
    local chrome = require "cosock.trace.chrome"
    local html = require "cosock.trace.html"
    local model = require "cosock.trace.model"
    local cli = require "cosock.trace.cli"
    local empty = { meta = {}, events = {} }
    assert.matches("bad argument #1 to 'text' " .. TRACE .. "nil)", err_of(summary.text), 1, true)
    assert.matches("bad argument #2 to 'text' (table or nil expected, got number)", err_of(summary.text, empty, 5), 1, true)
    for _, f in ipairs({ "busiest", "longest_waits", "chains" }) do
      assert.matches("bad argument #1 to '" .. f .. "' " .. TRACE .. "string)", err_of(summary[f], "x"), 1, true)
    end
    assert.matches("bad argument #1 to 'export' " .. TRACE .. "nil)", err_of(chrome.export), 1, true)
    assert.matches("bad argument #2 to 'write' (string expected, got nil)", err_of(chrome.write, empty), 1, true)
    assert.matches("bad argument #1 to 'data' " .. TRACE .. "boolean)", err_of(html.data, true), 1, true)
    assert.matches("bad argument #1 to 'render' " .. TRACE .. "nil)", err_of(html.render), 1, true)
    assert.matches("bad argument #2 to 'render' (table or nil expected, got string)", err_of(html.render, empty, "t"), 1, true)
    assert.matches("bad argument #2 to 'write' (string expected, got nil)", err_of(html.write, empty), 1, true)
    assert.matches("bad argument #1 to 'label' (a model of cosock.trace.model.build expected, got nil)",
      err_of(model.label, nil, 1), 1, true)
    assert.matches("bad argument #1 to 'main' (table of arguments expected, got nil)", err_of(cli.main), 1, true)
    assert.matches("bad argument #2 to 'main' (function or nil expected, got number)", err_of(cli.main, {}, 1), 1, true)
    -- a model works as well as a trace
    assert.equal(0, #summary.busiest(model.build(empty)))
  end)

  it("a directory given to read is 'cannot read', without a position inside the module", function()
    local err = err_of(require("cosock.trace.file").read, "/")
    assert.equal("cosock-trace: cannot read /: Is a directory", err)
  end)
end)
