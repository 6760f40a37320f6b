-- spec/support/loop.lua: helpers shared by the run-loop conformance specs
-- (spec/loop_*_spec.lua).
--
-- Only the public surface is used: cosock.spawn/run/reset/get_thread_metadata,
-- plain yields of (recvt, sendt, timeout), objects that speak the waker
-- protocol, and require("cosock.core").stats() to see what the loop still holds.
--
-- What is here:
--   L.obj(label, opts)    a fake cosock-aware object whose setwaker records every
--                         call; opts.ready = call the waker from inside setwaker
--                         (object already ready); opts.raise = setwaker raises it.
--   L.wrap(inner, label)  a fake wrapper {inner_sock = inner} with setwaker and
--                         _wake(kind) (records the kind, calls the current waker),
--                         so that the loop polls inner:getfd().
--   L.yield / L.pass / L.passes / L.wait_until   ways for a task to give up the
--                         processor without depending on cosock.socket.
--   L.stats / L.assert_clean   what the core still holds after a run.
--   L.assert_loop_works()  a fresh spawn + run still works (after a failure).
--   L.capture(fn, ...)    runs fn with print and io.write captured.
--   L.loop_error(err)     the message of an error run raised, after cosock.lua's position.
--   L.tcp_pair()          two connected raw LuaSocket tcp objects on 127.0.0.1.

local cosock = require "cosock"
local luassert = require "luassert"
local compat = require "cosock.compat"

local L = {}

local unpack = compat.unpack

-- ---------------------------------------------------------------------------
-- fake objects

local Obj = {}
Obj.__index = Obj

-- obj:setwaker(kind, fn): records {kind = kind, fn = fn} in self.calls, keeps
-- the current waker per kind in self.wakers and every waker ever given in
-- self.given[kind].
function Obj:setwaker(kind, fn)
  self.calls[#self.calls + 1] = { kind = kind, fn = fn }
  if self.opts.raise ~= nil then error(self.opts.raise, 0) end
  self.wakers[kind] = fn
  if fn ~= nil then
    self.given[kind] = self.given[kind] or {}
    table.insert(self.given[kind], fn)
    if self.opts.ready then fn() end
  end
end

-- obj:fire(kind): calls the waker currently set for kind (default "recvr");
-- raises when none is set so that a spec notices instead of hanging.
function Obj:fire(kind)
  kind = kind or "recvr"
  local w = self.wakers[kind]
  if w == nil then
    error("no " .. kind .. " waker set on " .. tostring(self.label), 2)
  end
  w()
end

-- the last waker given for kind, even after it was cleared (for stale calls).
function Obj:last_waker(kind)
  local g = self.given[kind or "recvr"]
  return g and g[#g] or nil
end

function Obj:has_waker(kind)
  return self.wakers[kind or "recvr"] ~= nil
end

-- obj:trace(): the setwaker calls as "kind:type" joined by ",", e.g.
-- "recvr:function,recvr:nil,recvr:nil".
function Obj:trace()
  local out = {}
  for i, c in ipairs(self.calls) do
    out[i] = tostring(c.kind) .. ":" .. type(c.fn)
  end
  return table.concat(out, ",")
end

function Obj:last_call()
  return self.calls[#self.calls]
end

function Obj:__tostring()
  return "fake(" .. tostring(self.label) .. ")"
end

function L.obj(label, opts)
  return setmetatable({
    label = label,
    opts = opts or {},
    calls = {},
    wakers = {},
    given = {},
    wakes = {},
  }, Obj)
end

-- A wrapper: the loop polls inner:getfd() and calls _wake(kind) when ready.
local Wrap = setmetatable({}, { __index = Obj })
Wrap.__index = Wrap
Wrap.__tostring = Obj.__tostring

function Wrap:_wake(kind)
  self.wakes[#self.wakes + 1] = kind
  local w = self.wakers[kind]
  if w ~= nil then w() end
end

function L.wrap(inner, label, opts)
  local o = L.obj(label, opts)
  o.inner_sock = inner
  return setmetatable(o, Wrap)
end

-- ---------------------------------------------------------------------------
-- giving up the processor

-- a plain yield of the loop's protocol
function L.yield(recvt, sendt, timeout)
  return coroutine.yield(recvt, sendt, timeout)
end

-- one pass: a zero timeout times out on the next pass
function L.pass()
  return coroutine.yield(nil, nil, 0)
end

function L.passes(n)
  for _ = 1, n do coroutine.yield(nil, nil, 0) end
end

-- yields zero timeouts until pred() is true; raises after `limit` passes so a
-- missing wake fails the spec instead of hanging it.
function L.wait_until(pred, what, limit)
  for _ = 1, limit or 2000 do
    if pred() then return end
    coroutine.yield(nil, nil, 0)
  end
  error("gave up waiting for " .. tostring(what), 2)
end

-- ---------------------------------------------------------------------------
-- loop state

function L.stats()
  return require("cosock.core").stats()
end

-- after a run that completed: nothing left in the loop.
function L.assert_clean()
  local s = L.stats()
  assert(s.tasks == 0, "tasks left: " .. tostring(s.tasks))
  assert(s.ready == 0, "ready left: " .. tostring(s.ready))
  assert(s.timers == 0, "timers left: " .. tostring(s.timers))
  assert(s.fds == 0, "fds left: " .. tostring(s.fds))
end

-- A fresh spawn + run works normally: a task waits on an object that another
-- task fires, then sleeps; nothing is left behind. For after a failure.
function L.assert_loop_works()
  local a = L.obj("after")
  local r, slept
  cosock.spawn(function()
    r = compat.pack(L.yield({ a }, nil, 5))
    L.yield(nil, nil, 0.001)
    slept = true
  end, "fresh-waiter")
  cosock.spawn(function()
    L.wait_until(function() return a:has_waker() end, "fresh park")
    a:fire()
  end, "fresh-waker")
  cosock.run()
  luassert.same({ a }, r[1])
  luassert.is_true(slept)
  L.assert_clean()
end


-- L.each_message(rx, fn): calls fn(m) for each message rx receives, until a
-- receive gives nil: a generic for over rx:receive where Lua can yield inside
-- a for's iterator; PUC 5.1 cannot (a C-call boundary there), so a plain loop
-- on 5.1.
function L.each_message(rx, fn)
  if require("spec.support.version").puc51 then
    while true do
      local m = rx:receive()
      if m == nil then return end
      fn(m)
    end
  end
  for m in function() return (rx:receive()) end do fn(m) end
end

-- ---------------------------------------------------------------------------
-- output capture

-- L.capture(fn, ...) -> output, ok, results...: runs fn protected with the
-- global print and io.write replaced by collectors.
function L.capture(fn, ...)
  local out = {}
  local oprint, owrite = _G.print, io.write
  _G.print = function(...)
    local n = select("#", ...)
    local t = {}
    for i = 1, n do t[i] = tostring((select(i, ...))) end
    out[#out + 1] = table.concat(t, "\t") .. "\n"
  end
  io.write = function(...)
    for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
    return io.stdout
  end
  local res = compat.pack(pcall(fn, ...))
  _G.print, io.write = oprint, owrite
  return table.concat(out), unpack(res, 1, res.n)
end

-- ---------------------------------------------------------------------------
-- sockets

-- L.tcp_pair() -> a, b, server: two connected raw LuaSocket tcp objects on
-- 127.0.0.1 (a = client side, b = accepted side), both non-blocking. The
-- listening socket is closed before returning.
function L.tcp_pair()
  local socket = require "socket"
  local srv = assert(socket.tcp())
  assert(srv:bind("127.0.0.1", 0))
  assert(srv:listen(64))
  local _, port = srv:getsockname()
  local a = assert(socket.tcp())
  a:settimeout(5)
  assert(a:connect("127.0.0.1", port))
  srv:settimeout(5)
  local b = assert(srv:accept())
  srv:close()
  a:settimeout(0)
  b:settimeout(0)
  return a, b
end

-- The loop's own errors (a task's error, a stall, a bad yield) come out of
-- cosock.run with cosock.lua's position in front, as cosock 0.2.0 raises them
-- from cosock.lua. L.loop_error(err) checks that position is there and returns
-- the message after it.
function L.loop_error(err)
  local rest = type(err) == "string" and err:match("^[^\n]-cosock%.lua:%d+: (.*)$")
  assert(rest, "expected cosock.lua's position in front of the error, got: " .. tostring(err))
  return rest
end

-- plain-text find
function L.has(s, needle)
  return type(s) == "string" and s:find(needle, 1, true) ~= nil
end

function L.starts(s, prefix)
  return type(s) == "string" and s:sub(1, #prefix) == prefix
end

-- At every prefix of log, the number of `a` entries and `b` entries differ by
-- at most one: both tasks advanced one step per pass.
function L.assert_lockstep(log, a, b)
  local na, nb = 0, 0
  for i, v in ipairs(log) do
    if v == a then na = na + 1 elseif v == b then nb = nb + 1 end
    assert(math.abs(na - nb) <= 1,
      "not one step per pass at entry " .. i .. ": " .. table.concat(log, ","))
  end
end

return L
