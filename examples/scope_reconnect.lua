-- scope_reconnect.lua: reconnect with backoff under a deadline, and a scope
-- whose tasks are cancelled with cleanup when one fails.
--
-- Shows: scope.timeout around a whole reconnect loop (every connect, receive
-- and sleep inside obeys its deadline without being given one); s:spawn and
-- a failing task cancelling its sibling, whose pcall-based cleanup closes its
-- socket; s:defer; scope.cancelled raised again after cleanup.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh scope_reconnect
-- (or: lua5.3 examples/scope_reconnect.lua with cosock on LUA_PATH/LUA_CPATH)
-- Prints:
--   attempt 1: connection refused
--   attempt 2: connection refused
--   attempt 3: connected, got: hello
--   reconnect: hello
--   gave up: timeout
--   reader cleanup: cosock.scope: cancelled (socket closed)
--   deferred: scope ends
--   scope: false parser failed
--   failed in: task 'parser'

local cosock = require "cosock"
local scope = cosock.scope
local socket = cosock.socket
local pcall = require("cosock.compat").pcall -- (a pcall a task may wait in, on Lua 5.1 too)

-- A port where nothing listens yet (a socket is bound there, so no other
-- program takes it, but does not listen: a connect is refused); the server
-- listens there after 0.05 s.
local srv = assert(socket.tcp())
assert(srv:bind("127.0.0.1", 0))
local _, port = srv:getsockname()

cosock.spawn(function()
  socket.sleep(0.05)
  assert(srv:listen())
  local c = assert(srv:accept())
  c:send("hello\n")
  c:close()
  srv:close()
end, "late server")

-- Connects and reads one line, retrying with a doubling pause; log(line)
-- tells each attempt. No timeout is given anywhere: the caller's deadline
-- bounds it all.
local function fetch_line(host, p, log)
  local pause, attempt = 0.02, 0
  while true do
    attempt = attempt + 1
    local c = socket.tcp()
    local ok, err = c:connect(host, p)
    if ok then
      local line = c:receive()
      c:close()
      log(("attempt %d: connected, got: %s"):format(attempt, line))
      return line
    end
    c:close()
    log(("attempt %d: %s"):format(attempt, err))
    socket.sleep(pause)
    pause = pause * 2
  end
end

cosock.spawn(function()
  print("reconnect: " .. tostring(scope.timeout(2, fetch_line, "127.0.0.1", port, print)))
  -- Nothing listens any more: the deadline ends the attempts (not logged:
  -- how many fit in 0.1 s depends on the machine).
  local r, why = scope.timeout(0.1, fetch_line, "127.0.0.1", port, function() end)
  print("gave up: " .. tostring(r or why))

  -- A scope of two tasks: the parser fails, so the reader is cancelled; its
  -- cleanup runs and raises the cancellation again.
  local ok, err = scope.run(function(s)
    s:defer(function() print("deferred: scope ends") end)
    s:spawn(function()
      local srv = assert(socket.bind("127.0.0.1", 0))
      local ok2, e = pcall(function() return srv:accept() end) -- waits for ever
      srv:close()
      print("reader cleanup: " .. tostring(e) .. " (socket closed)")
      error(e, 0)
    end, "reader")
    s:spawn(function()
      socket.sleep(0.01)
      error("parser failed", 0)
    end, "parser")
  end)
  -- err: the message, the parser's stack, "(in task 'parser', spawned at ...)"
  print("scope: " .. tostring(ok) .. " " .. err:match("^[^\n]*"))
  print("failed in: " .. err:match("%(in (task '[^']*')"))
end, "client")

cosock.run()
