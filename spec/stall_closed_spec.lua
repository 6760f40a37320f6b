-- The deadlock report on what was closed: a task waiting on a closed, empty
-- channel receiver (in select, or in a receive whose receiver another task
-- closed) or on a closed sender can never wake under cosock's close (the
-- default); the report says so on its task's line, and a last line names
-- cosock.profile("new") and set_close_wakes(true). cosock's first line stays
-- first. A loop blocked for ever on a closed socket (cosock's rule: no stall
-- error) gets the same report on the error that ends it (Ctrl-C).

local cosock = require "cosock"
local L = require "spec.support.loop"
local interpreter = require "spec.support.interpreter"

local FIRST = "cosock tried to call socket.select with no sockets and no timeout. "
  .. "this is a bug, please report it, including the above dump state"
local HINT = "cosock-native: a close() wakes no waiting task and a closed end is never ready "
  .. "to select: cosock 0.2.0's behaviour, the default, for code written for cosock. For new "
  .. "code, cosock.profile(\"new\") (or cosock.set_close_wakes(true)) makes a close wake its "
  .. "waiters with \"closed\" and a closed end ready (doc/reference.md, cosock.profile)"
local RX_CLOSED = "waits to receive on a channel that is closed and empty (a closed, empty "
  .. "receiver is not ready to select and its close woke no one, as in cosock 0.2.0)"

local function lines_of(text)
  local t = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = line end
  return t
end

local function stall_lines()
  local _, ok, err = L.capture(cosock.run)
  assert.is_false(ok)
  cosock.reset()
  return lines_of(L.loop_error(err))
end

describe("the stall report on what was closed", function()
  before_each(function() cosock.reset() end)

  it("a select over a closed, empty receiver: its line says so, the last line names the profile", function()
    local tx, rx = cosock.channel.new()
    tx:close()
    cosock.spawn(function() cosock.socket.select({ rx }, nil, nil) end, "selector")
    local lines = stall_lines()
    assert.equal(FIRST, lines[1])
    assert.matches("^cosock%-native: every live task waits on something that nothing can wake", lines[2])
    assert.equal("  task 'selector' " .. RX_CLOSED, lines[3])
    assert.equal(HINT, lines[4])
    assert.equal(4, #lines)
  end)

  it("a receive whose receiver another task closed (receiver:close() wakes no one)", function()
    local _, rx = cosock.channel.new()
    cosock.spawn(function() rx:receive() end, "reader")
    cosock.spawn(function() rx:close() end, "closer")
    local lines = stall_lines()
    assert.same({ "  task 'reader' " .. RX_CLOSED, HINT }, { lines[3], lines[4] })
  end)

  it("a bounded sender waiting for room on a channel whose sender another task closed", function()
    local tx, rx = cosock.channel.new(1)
    cosock.spawn(function() local keep = rx; tx:send(1); tx:send(2); return keep end, "full")
    cosock.spawn(function() tx:close() end, "closer")
    local lines = stall_lines()
    assert.equal("  task 'full' waits to send on a channel that is closed (a closed sender is "
      .. "not ready to select and its close woke no one, as in cosock 0.2.0)", lines[3])
    assert.equal(HINT, lines[4])
  end)

  it("no such line when nothing waited on is closed", function()
    local _, rx = cosock.channel.new()
    cosock.spawn(function() rx:receive() end, "orphan")
    local lines = stall_lines()
    assert.equal(3, #lines)
    assert.is_nil(table.concat(lines, "\n"):find("profile", 1, true))
  end)

  it("a closed receiver is ready with cosock.profile('new'): no stall at all", function()
    cosock.profile("new")
    local tx, rx = cosock.channel.new()
    tx:close()
    local got
    cosock.spawn(function() got = cosock.socket.select({ rx }, nil, nil) end, "selector")
    cosock.run()
    assert.same({ rx }, got)
  end)

  it("Ctrl-C of a loop blocked for ever on a closed socket: the error says what each task waits on", function()
    -- A child process (lua.c's SIGINT handler): the closer closes the socket
    -- and has SIGINT sent to the process a moment later, when the loop blocks.
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath), [[
local cosock = require "cosock"
local u = assert(cosock.socket.udp())
assert(u:setsockname("127.0.0.1", 0))
cosock.spawn(function() u:receive() end, "reader")
cosock.spawn(function() u:close(); os.execute("(sleep 0.1; kill -INT $PPID) &") end, "closer")
local ok, err = pcall(cosock.run)
io.write(tostring(ok), "\n", tostring(err), "\n")
]])
    f:close()
    local p = assert(io.popen("timeout --foreground 30 " .. interpreter .. " " .. script .. " 2>&1"))
    local lines = lines_of(p:read("*a"))
    p:close()
    os.remove(script)
    assert.equal("false", lines[1])
    assert.matches("interrupted!$", lines[2])
    assert.equal("cosock-native: run was blocked for ever, as cosock 0.2.0 blocks: every live task "
      .. "waits on something that nothing can wake, and a wait on a closed socket kept the loop "
      .. "from reporting a stall", lines[3])
    assert.equal("  task 'reader' waits to read from a socket (fd -1, - -> -), which is closed "
      .. "(its close woke no one, as in cosock 0.2.0)", lines[4])
    assert.equal(HINT, lines[5])
  end)
end)
