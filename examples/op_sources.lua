-- op_sources.lua: each kind of cosock.op operation, performed in turn.
--
-- Shows: op.is_op; op.always and op.never; op.choice with op:wrap; op.deadline
-- (a time on cosock.timer.now()'s clock) and op.sleep; op.cond (signal /
-- wait_op) signalled by another task; op.guard (its function runs at each
-- perform); op.writable and op.readable on a cosock TCP socket; op.timer on a
-- oneshot timer (due, then handled) and on a cancelled one; op.join on a task
-- handle; op.perform called as a function and op.op_methods (the metatable
-- of every operation). See doc/op.md and doc/reference.md (cosock.op).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh op_sources
-- It prints, in this order:
--   is_op: true false
--   always: 1 nil 3
--   choice(never, always): a
--   deadline: passed
--   cond: signalled (the sleep lost)
--   cond again: ready at once
--   guard: 1 then 2
--   writable: true
--   readable: hello
--   timer: true
--   timer again: nil handled
--   cancelled timer: nil cancelled
--   join: true done 42
--   op.perform(always): via op.perform
--   op_methods: true true cosock.op
--   run() returned

local cosock = require "cosock"
local op, socket, timer = cosock.op, cosock.socket, cosock.timer

local function show(label, ...)
  local out = { label }
  for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
  print(table.concat(out, " "))
end

cosock.spawn(function()
  show("is_op:", op.is_op(op.never()), op.is_op({}))
  show("always:", op.always(1, nil, 3):perform())
  show("choice(never, always):", op.choice(op.never(), op.always("a")):perform())

  -- deadline(t): ready once timer.now() reaches t.
  local past = op.deadline(timer.now() + 0.02):wrap(function() return "passed" end)
  show("deadline:", past:perform())

  -- cond: a one-shot condition; once signalled its wait_op is always ready.
  local c = op.cond()
  cosock.spawn(function()
    socket.sleep(0.01)
    c:signal()
  end, "signaller")
  show("cond:", op.choice(
    c:wait_op():wrap(function() return "signalled (the sleep lost)" end),
    op.sleep(5):wrap(function() return "slept" end)):perform())
  show("cond again:", c:wait_op():wrap(function() return "ready at once" end):perform())

  -- guard(fn): fn makes the operation anew at each perform.
  local n = 0
  local counter = op.guard(function()
    n = n + 1
    return op.always(n)
  end)
  local first = counter:perform()
  print("guard: " .. first .. " then " .. counter:perform())

  -- readable / writable: the socket itself once it can be read / written.
  local server = assert(socket.bind("127.0.0.1", 0))
  local _, port = server:getsockname()
  local client = assert(socket.connect("127.0.0.1", port))
  local peer = assert(server:accept())
  show("writable:", op.writable(client):perform() == client)
  cosock.spawn(function()
    socket.sleep(0.01)
    peer:send("hello\n")
  end, "writer")
  show("readable:", op.choice(
    op.readable(client):wrap(function(s) return s:receive() end),
    op.sleep(5):wrap(function() return "nothing came" end)):perform())
  client:close()
  peer:close()
  server:close()

  -- timer(t): ready once the timer object is due; performing it handles it.
  local once = timer.create_oneshot(0.01)
  show("timer:", op.timer(once):perform())
  show("timer again:", op.timer(once):perform())
  local stopped = timer.create_interval(1)
  stopped:cancel()
  show("cancelled timer:", op.timer(stopped):perform())

  -- join(handle): what handle:join() gives, once the task ended.
  local h = cosock.spawn(function()
    socket.sleep(0.01)
    return "done", 42
  end, "worker")
  show("join:", op.join(h):perform())

  -- op.perform is the method as a function; op.op_methods the metatable.
  local a = op.always("via op.perform")
  show("op.perform(always):", op.perform(a))
  show("op_methods:", getmetatable(a) == op.op_methods, op.op_methods.perform == op.perform,
    op.op_methods.__name)
end, "main")

cosock.run()
print("run() returned")
