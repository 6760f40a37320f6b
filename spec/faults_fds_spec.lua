-- Resource faults: no fd left when a task accepts or connects, or when the
-- loop needs an epoll instance (switching backend, or moving to epoll by
-- itself for a descriptor past FD_SETSIZE). Each gives a clear error, and
-- once fds are free again the loop works. Each scenario runs in a child
-- process under `ulimit -n` (as spec/regress/failed_reset_changes_nothing_spec.lua).

-- The child's common part: paths, and exhaust() / release() that take every
-- free fd with bound UDP sockets and give them back.
local PRELUDE = [=[
package.path, package.cpath = %q, %q
local cosock = require "cosock"
local core = require "cosock.core"
local socket = cosock.socket
local held = {}
local function exhaust()
  while true do
    local u = socket.udp()
    if not u or not u.inner_sock:setsockname("127.0.0.1", 0) then
      if u then u:close() end
      break
    end
    held[#held + 1] = u
  end
end
local function release() for _, u in ipairs(held) do u:close() end held = {} end
local function state()
  local st = core.stats()
  return ("%%d tasks, %%d fds, %%s"):format(st.tasks, st.fds, st.backend)
end
]=]

-- Runs body (Lua, after PRELUDE) in a child with at most nofile fds, starting
-- on the given poller (default select, whatever the specs run with); returns
-- its output (stdout and stderr).
local function child(nofile, body, poller)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(PRELUDE:format(package.path, package.cpath), body)
  f:close()
  local lua = require "spec.support.interpreter"
  local p = io.popen(("ulimit -n %d && COSOCK_POLLER=%s timeout 30 %s %s 2>&1"):format(
    nofile, poller or "select", lua, script))
  local out = p:read("*a")
  p:close()
  os.remove(script)
  return out
end

local function field(out, name)
  return out:match(name .. ":\t([^\n]*)")
end

describe("fd exhaustion", function()
  it("accept fails with 'Too many open files' and works once an fd is free", function()
    local out = child(64, [=[
cosock.spawn(function()
  local srv = assert(socket.bind("127.0.0.1", 0))
  srv:settimeout(2)
  local port = select(2, srv:getsockname())
  local c = assert(socket.tcp())
  c:settimeout(2)
  assert(c:connect("127.0.0.1", port))     -- waits in the backlog
  exhaust()
  print("accept:", srv:accept())
  release()
  local s, err = srv:accept()
  print("accept again:", s and "a client" or err)
  assert(c:send("ping\n"))
  print("received:", s:receive())
  s:close() c:close() srv:close()
end, "server")
print("run:", pcall(cosock.run))
print("after:", state())
]=])
    assert.equal("nil\tToo many open files", field(out, "accept"), out)
    assert.equal("a client", field(out, "accept again"), out)
    assert.equal("ping", field(out, "received"), out)
    assert.equal("true", field(out, "run"), out)
    assert.equal("0 tasks, 0 fds, select", field(out, "after"), out)
  end)

  it("connect fails with 'Too many open files' and works once an fd is free", function()
    local out = child(64, [=[
cosock.spawn(function()
  local srv = assert(socket.bind("127.0.0.1", 0))
  srv:settimeout(2)
  local port = select(2, srv:getsockname())
  exhaust()
  print("connect:", socket.connect("127.0.0.1", port))
  release()
  local c = assert(socket.connect("127.0.0.1", port))
  local s = assert(srv:accept())
  print("connect again:", c:getpeername() ~= nil)
  s:close() c:close() srv:close()
end, "client")
print("run:", pcall(cosock.run))
print("after:", state())
]=])
    assert.equal("nil\tToo many open files", field(out, "connect"), out)
    assert.equal("true", field(out, "connect again"), out)
    assert.equal("true", field(out, "run"), out)
    assert.equal("0 tasks, 0 fds, select", field(out, "after"), out)
  end)

  it("set_backend('epoll') without an fd for it raises and keeps the select poller working", function()
    local out = child(64, [=[
exhaust()
print("switch:", pcall(core.set_backend, "epoll"))
print("backend:", core.stats().backend)
release()
local got
cosock.spawn(function()
  local tx, rx = cosock.channel.new()
  cosock.spawn(function() socket.sleep(0.01) tx:send("x") end, "sender")
  rx:settimeout(2)
  got = rx:receive()
end, "receiver")
print("run:", pcall(cosock.run))
print("got:", got)
print("switch again:", pcall(core.set_backend, "epoll"))
print("after:", state())
]=])
    assert.matches("^false\tcosock: cannot switch to the epoll poller: Too many open files$",
      field(out, "switch"), out)
    assert.equal("select", field(out, "backend"), out)
    assert.equal("true", field(out, "run"), out)
    assert.equal("x", field(out, "got"), out)
    assert.equal("true", field(out, "switch again"), out)
    assert.equal("0 tasks, 0 fds, epoll", field(out, "after"), out)
  end)

  it("a descriptor past FD_SETSIZE with no fd left for epoll: the waiting task gets a clear error, a later wait moves to epoll", function()
    local out = child(1100, [=[
exhaust()
local high
for _, u in ipairs(held) do
  if u.inner_sock:getfd() >= 1024 then high = u break end
end
print("high:", high ~= nil)
cosock.spawn(function() high:settimeout(0.05) high:receive() end, "high waiter")
print("run:", pcall(cosock.run))
print("between:", state())
held[#held]:close()                        -- one fd for epoll
held[#held] = nil
cosock.spawn(function()
  high:settimeout(0.05)
  print("receive:", high:receive())
end, "high waiter 2")
print("run again:", pcall(cosock.run))
print("after:", state())
release()
]=])
    assert.equal("true", field(out, "high"), out)
    -- (run raises the loop's errors with cosock.lua's position, as cosock does)
    assert.matches("^false\t[^\t]-cosock%.lua:%d+: cosock: cannot poll fd %d+ of task 'high waiter': Too many open files$",
      field(out, "run"), out)
    assert.equal("0 tasks, 0 fds, select", field(out, "between"), out)
    assert.equal("nil\ttimeout", field(out, "receive"), out)
    assert.equal("true", field(out, "run again"), out)
    assert.equal("0 tasks, 0 fds, epoll", field(out, "after"), out)
  end)

  it("COSOCK_POLLER=epoll with no fd free: opening the module raises, and works once one is", function()
    local out = child(64, [=[
-- The module's opener, found while fds are free (require's search opens
-- the file to see that it is there).
-- (package.searchpath is 5.2+: on 5.1 the same search by hand)
local searchpath = package.searchpath or function(name, path)
  for template in path:gmatch("[^;]+") do
    local file = template:gsub("%?", (name:gsub("%.", "/")))
    local f = io.open(file, "r")
    if f then f:close() return file end
  end
end
local open = assert(package.loadlib(searchpath("cosock.core", package.cpath),
  "luaopen_cosock_core"))
exhaust()
print("open:", pcall(open))
release()
local ok, core2 = pcall(open)
print("open again:", ok, ok and core2.stats().backend)
]=], "epoll")
    assert.equal("false\tcosock: cannot create the epoll poller: Too many open files",
      field(out, "open"), out)
    assert.equal("true\tepoll", field(out, "open again"), out)
  end)
end)
