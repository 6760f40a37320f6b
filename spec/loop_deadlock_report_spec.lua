-- The deadlock report: when the loop stalls, run's error keeps cosock's first
-- line and then names each blocked task and what it waits on (a channel end
-- and who holds the other end, a socket, a join and a cycle of joins, another
-- object, nothing). (Not in cosock 0.2.0: cosock-native's lines come after
-- cosock's words.)

local cosock = require "cosock"
local L = require "spec.support.loop"
local compat = require "cosock.compat"

local STUCK = "cosock tried to call socket.select with no sockets and no timeout"

-- The lines after cosock's first line and cosock-native's second line.
local function report_lines(err)
  local msg = L.loop_error(err)
  assert.is_true(L.starts(msg, STUCK), msg)
  local lines = {}
  for line in (msg .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return { compat.unpack(lines, 3) }
end

local function stall()
  local _, ok, err = L.capture(cosock.run)
  assert.is_false(ok)
  local lines = report_lines(err)
  cosock.reset()
  return lines
end

local function has_line(lines, text)
  for _, l in ipairs(lines) do
    if l == "  " .. text then return true end
  end
  return false, table.concat(lines, "\n")
end

describe("the deadlock report after a stall", function()
  before_each(function()
    cosock.reset()
  end)

  it("a receiver whose sender no other live task holds", function()
    local _, rx = cosock.channel.new()
    cosock.spawn(function() rx:receive() end, "orphan")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'orphan' waits to receive on a channel; "
      .. "no other live task holds its sender (nothing can send on it)"))
  end)

  it("a receiver whose sender another task holds, and one that holds its own", function()
    local tx, rx = cosock.channel.new()
    local tx2, rx2 = cosock.channel.new()
    cosock.spawn(function() rx:receive() end, "waiting")
    cosock.spawn(function() local mine = { out = tx }; coroutine.yield(); return mine end, "holder")
    cosock.spawn(function() local keep = tx2; rx2:receive(); return keep end, "self-held")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'waiting' waits to receive on a channel; "
      .. "its sender is held by task 'holder'"))
    assert.is_true(has_line(lines, "task 'self-held' waits to receive on a channel; "
      .. "no other live task holds its sender (nothing can send on it); only this task itself does"))
    assert.is_true(has_line(lines, "task 'holder' waits on nothing (it yielded no object and no timeout)"))
  end)

  it("a sender waiting on a full channel, and who holds its receiver", function()
    local tx, rx = cosock.channel.new(1)
    cosock.spawn(function() tx:send(1); tx:send(2) end, "full")
    cosock.spawn(function() local r = rx; coroutine.yield(); return r end, "reader")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'full' waits to send on a channel; "
      .. "its receiver is held by task 'reader'"))
  end)

  it("a join, and a cycle of joins", function()
    local a, b, c
    a = cosock.spawn(function() L.pass(); b:join() end, "A")
    b = cosock.spawn(function() L.pass(); a:join() end, "B")
    c = cosock.spawn(function() L.pass(); a:join() end, "C")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'A' waits to join task 'B' (a cycle of joins: 'A' -> 'B' -> 'A')"))
    assert.is_true(has_line(lines, "task 'B' waits to join task 'A' (a cycle of joins: 'B' -> 'A' -> 'B')"))
    assert.is_true(has_line(lines, "task 'C' waits to join task 'A'"))
  end)

  it("a socket whose descriptor is gone: its fd and addresses", function()
    -- Another library's wrapper around a LuaSocket object closed behind it:
    -- nothing left to poll. By default the loop then blocks as cosock does
    -- (spec/interrupt_spec.lua); with set_close_wakes(true) it reports.
    cosock.set_close_wakes(true)
    local inner = require("socket").udp()
    inner:close()
    local w = L.wrap(inner, "theirs")
    cosock.spawn(function() cosock.socket.select({ w }) end, "on socket")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'on socket' waits to read from a socket (fd -1, - -> -)"))
  end)

  it("another object by its tostring, and several objects in one line", function()
    local a, b = L.obj("a"), L.obj("b")
    cosock.spawn(function() L.yield({ a }, { b }) end, "two")
    local lines = stall()
    assert.is_true(has_line(lines, "task 'two' waits for fake(a) to be readable; for fake(b) to be writable"))
  end)

  it("an unnamed task is named by its coroutine", function()
    local co
    cosock.spawn(function() co = tostring(coroutine.running()); coroutine.yield() end)
    local lines = stall()
    assert.is_true(has_line(lines, "task '" .. co .. "' waits on nothing (it yielded no object and no timeout)"))
  end)
end)
