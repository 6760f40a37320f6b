-- The stall dump, as cosock 0.2.0 prints it: each task's first line is
-- tostring(coroutine) .. "\t" .. tostring(name), and the tasks the pass before
-- the stall resumed ("threads woken in last turn (N)") come before the others
-- ("threads not woken in last turn (M)"). Run in a child process: the dump
-- goes to standard output with the print captured when cosock loaded.

local child = require "spec.support.child"

local CHILD = [=[
local cosock = require "cosock"
local _, rx1 = cosock.channel.new()
local _, rx2 = cosock.channel.new()
local cos = {}
cosock.spawn(function() cos.early = tostring(coroutine.running()); rx1:receive() end, "early")
cosock.spawn(function()
  cos.late = tostring(coroutine.running())
  cosock.socket.sleep(0.01)
  rx2:receive()
end, "late")
pcall(cosock.run)
print("early=" .. cos.early)
print("late=" .. cos.late)
]=]

describe("the stall dump", function()
  it("names each task's coroutine and splits woken from not woken", function()
    local out = child.run(CHILD)
    local early, late = out:match("early=(thread: 0x%x+)"), out:match("late=(thread: 0x%x+)")
    assert.is_not_nil(early, out)
    assert.is_not_nil(late, out)
    local woken = out:match("threads woken in last turn %(1%)\n=+\n(.-)threads not woken")
    local not_woken = out:match("threads not woken in last turn %(1%)\n=+\n(.-)%^%^%^")
    assert.is_not_nil(woken, out)
    assert.is_not_nil(not_woken, out)
    assert.is_true(woken:find(late .. "\tlate\n", 1, true) ~= nil, out)
    assert.is_true(not_woken:find(early .. "\tearly\n", 1, true) ~= nil, out)
  end)
end)
