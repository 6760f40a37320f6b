-- Regression: cosock.reset() freed every task before it made its new poller;
-- when that failed (no fd left for epoll_create1) the loop kept the old fd
-- interest and wrapper waiters of tasks that no longer existed, so a new
-- receive on the same wrapper failed with "recvr waker already set".
-- The scenario runs in a child process with a small fd limit.

local CHILD = [=[
package.path, package.cpath = %q, %q
local cosock = require "cosock"
local core = require "cosock.core"
local compat = require "cosock.compat"
local socket = cosock.socket
core.set_backend("epoll")                  -- its poller needs an fd of its own
cosock.reset()
local c, s
cosock.spawn(function()
  local srv = assert(socket.bind("127.0.0.1", 0))
  local _, port = srv:getsockname()
  c = assert(socket.connect("127.0.0.1", port))
  s = assert(srv:accept())
  srv:close()
  cosock.spawn(function() c:receive() end, "waiter")  -- stays parked on c
  socket.sleep(0)
  error("boom")                              -- ends run with the waiter parked
end, "setup")
assert(not pcall(cosock.run))
local function state()
  local st = core.stats()
  return st.tasks .. " tasks, " .. st.fds .. " fds"
end
local before = state()
local held = {}                              -- use up every fd
while true do
  local u = socket.udp()
  if not u or not u.inner_sock:setsockname("127.0.0.1", 0) then break end
  held[#held + 1] = u
end
local ok, err = pcall(cosock.reset)
print("failed reset:", ok, err)
print("before:", before)
print("after failed reset:", state())
for _, u in ipairs(held) do u:close() end
cosock.reset()
print("after reset:", state())
local got
cosock.spawn(function()
  assert(s:send("hello\n"))
  got = compat.pack(c:receive())
end, "receiver")
cosock.run()
print("receive:", got[1], got[2])
]=]

describe("reset", function()
  it("that cannot make its poller raises and leaves the loop as it was", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(CHILD:format(package.path, package.cpath))
    f:close()
    local lua = require "spec.support.interpreter"
    local p = io.popen("ulimit -n 64 && " .. lua .. " " .. script .. " 2>&1")
    local out = p:read("*a")
    p:close()
    os.remove(script)
    assert.matches("failed reset:\tfalse\t[^\n]*cannot create the poller", out)
    local before = out:match("before:\t([^\n]*)")
    assert.equal("1 tasks, 1 fds", before)  -- the waiter, on c's fd
    assert.equal(before, out:match("after failed reset:\t([^\n]*)"))
    assert.equal("0 tasks, 0 fds", out:match("after reset:\t([^\n]*)"))
    assert.equal("hello\tnil", out:match("receive:\t([^\n]*)"))
  end)
end)
