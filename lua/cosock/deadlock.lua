--- cosock.deadlock: what each task of a stalled loop waits on, for the lines
--- that follow the stall error's first line (cosock's own words stay first).
---
--- report() -> text: one line per live task, naming what it waits on:
---   a channel receiver (and whether any live task still holds its sender,
---   or that it is closed and empty),
---   a channel sender (and whether any live task holds its receiver, or that
---   it is closed),
---   a socket (its fd, local and peer address; whether it was closed),
---   a join (the task it joins, and the chain of joins when they form a cycle),
---   a predicate of cosock.when, a signal of cosock.signal,
---   the end of a scope's tasks (cosock.scope), a lock or semaphore (cosock.sync),
---   anything else by its tostring.
--- When a task waits on something closed (and set_close_wakes is off), a last
--- line says that a close wakes no one by default and what changes it
--- (cosock.profile "new"). Also added to the error that ends a loop blocked
--- for ever on a closed socket (Ctrl-C: blocked(), from cosock.run).
--- Run only when the loop stalls: it walks the tasks' stacks with the debug
--- library to find who holds the other end of a channel.

local core = require "cosock.core"
core.open "when" -- (its C functions: added to cosock.core on first use)
local compat = require "cosock.compat"

local M = {}

local function task_label(st)
  local name = st.info.name
  if name == nil then return "'" .. tostring(st.co) .. "'" end
  return "'" .. tostring(name) .. "'"
end

local function method_table(obj)
  local mt = getmetatable(obj)
  return type(mt) == "table" and mt.__index or nil
end

-- Calls visit(value) for every local of every level of co's stack and every
-- upvalue of the functions there, and for the fields of tables among them
-- (one level down: a task often keeps its channel ends in a table).
local function each_held(co, visit)
  local function look(v)
    visit(v)
    if type(v) == "table" then
      for _, field in pairs(v) do visit(field) end
    end
  end
  for level = 0, 200 do
    local info = debug.getinfo(co, level, "f")
    if not info then break end
    for i = 1, 250 do
      local name, v = debug.getlocal(co, level, i)
      if not name then break end
      look(v)
    end
    if info.func then
      for i = 1, 255 do
        local name, v = debug.getupvalue(info.func, i)
        if not name then break end
        look(v)
      end
    end
  end
end

-- The live tasks that hold a channel end of the channel whose queue is
-- `queue`, with method table `methods`, and whether `self` (the waiting
-- task) is one of them.
local function holders(states, self, queue, methods)
  local found, by_self = {}, false
  for _, st in ipairs(states) do
    local holds = false
    each_held(st.co, function(v)
      local link = type(v) == "table" and rawget(v, "link")
      if type(link) == "table" and rawget(link, "queue") == queue and method_table(v) == methods then
        holds = true
      end
    end)
    if holds and st == self then by_self = true
    elseif holds then found[#found + 1] = task_label(st) end
  end
  return found, by_self
end

local function other_end(states, st, queue, what, methods)
  local who, by_self = holders(states, st, queue, methods)
  if #who == 0 then
    return ("no other live task holds its %s (nothing can %s)%s"):format(what,
      what == "sender" and "send on it" or "receive from it",
      by_self and "; only this task itself does" or "")
  end
  return ("its %s is held by task %s"):format(what, table.concat(who, ", task "))
end

local function address(inner, method)
  local ok, host, port = pcall(inner[method], inner)
  if ok and host then return tostring(host) .. ":" .. tostring(port) end
  return "-"
end

local function socket_text(obj)
  local inner = obj.inner_sock
  local ok, fd = pcall(inner.getfd, inner)
  if ok and compat.math_type(fd) == "float" and fd == math.floor(fd) then fd = compat.tointeger(fd) end
  return ("a socket (fd %s, %s -> %s)"):format(ok and tostring(fd) or "?",
    address(inner, "getsockname"), address(inner, "getpeername"))
end

-- Is coroutine co suspended in core.pred_wait? With lua_yieldk that function
-- is the top of its stack. Where the yield is emulated (5.1, 5.2, LuaJIT:
-- src/compat/kcompat.c) core.pred_wait is a Lua wrapper around the C function, kept
-- in its upvalue "pred_wait"; the top is coroutine.yield, called from the
-- lift's finish(f, ...) whose f is that C function.
local raw_pred_wait = core.pred_wait
for i = 1, math.huge do
  local name, v = debug.getupvalue(core.pred_wait, i)
  if name == nil then break end
  if name == "pred_wait" then raw_pred_wait = v end
end
local function in_pred_wait(co)
  local top = debug.getinfo(co, 0, "f")
  if top and top.func == raw_pred_wait then return true end
  if raw_pred_wait == core.pred_wait or debug.getinfo(co, 1, "f") == nil then return false end
  local name, f = debug.getlocal(co, 1, 1)
  return name == "f" and f == raw_pred_wait
end

M.in_pred_wait = in_pred_wait -- (cosock.tasks tells a predicate wait the same way)

-- Set by wait_text when a task waits on something closed (report's last line).
local closed_seen = {}

-- The line after the tasks when one waits on a closed channel or socket.
local CLOSED_HINT = "\ncosock-native: a close() wakes no waiting task and a closed end is never "
  .. "ready to select: cosock 0.2.0's behaviour, the default, for code written for cosock. "
  .. "For new code, cosock.profile(\"new\") (or cosock.set_close_wakes(true)) makes a close "
  .. "wake its waiters with \"closed\" and a closed end ready (doc/reference.md, cosock.profile)"

local SENDER_CLOSED = "to send on a channel that is closed (a closed sender is not ready to "
  .. "select and its close woke no one, as in cosock 0.2.0)"

-- The link of the channel whose queue is `queue`, from a channel end some
-- task holds (a send's proxy names only the queue), or nil.
local function link_of(states, queue)
  local found
  for _, st in ipairs(states) do
    each_held(st.co, function(v)
      local link = type(v) == "table" and rawget(v, "link")
      if type(link) == "table" and rawget(link, "queue") == queue then found = link end
    end)
    if found then return found end
  end
  return nil
end

-- What one wait of task st is, in words.
local function wait_text(states, by_handle, st, w)
  local obj, channel = w.obj, package.loaded["cosock.channel"]
  local methods = method_table(obj)
  if in_pred_wait(st.co) then
    return "on a predicate (cosock.when) that stayed false"
  elseif type(obj) == "table" and (getmetatable(obj) or {}).__name == "cosock.signal waiter" then
    return ("for the signal %s (cosock.signal), which nobody raised")
      :format((("%q"):format(tostring(obj.name)):gsub("\\\n", "\\n")))
  elseif channel and methods == channel.receiver then
    if obj.link.closed and #obj.link.queue == 0 then
      closed_seen[1] = true
      return "to receive on a channel that is closed and empty (a closed, empty receiver is not "
        .. "ready to select and its close woke no one, as in cosock 0.2.0)"
    end
    return "to receive on a channel; " .. other_end(states, st, obj.link.queue, "sender", channel.sender)
  elseif channel and methods == channel.sender then
    if obj.link.closed then
      closed_seen[1] = true
      return SENDER_CLOSED
    end
    return "to send on a channel; " .. other_end(states, st, obj.link.queue, "receiver", channel.receiver)
  elseif channel and type(obj) == "table" and (getmetatable(obj) or {}).__name == "cosock.channel send" then
    -- a send waiting in line through the waker protocol (a yield the task
    -- forwards; on 5.1 and 5.2 every wait): obj[1] is the channel's queue
    local link = link_of(states, obj[1])
    if link and link.closed then
      closed_seen[1] = true
      return SENDER_CLOSED
    end
    return "to send on a channel; " .. other_end(states, st, obj[1], "receiver", channel.receiver)
  elseif getmetatable(obj) == core.thread_handle then
    local target = by_handle[obj]
    return "to join task " .. (target and task_label(target) or "'" .. tostring(obj) .. "'")
  elseif type(obj) == "table" and type((getmetatable(obj) or {}).__wait_text) == "function" then
    -- cosock.scope's and cosock.sync's waits say what they wait for
    return getmetatable(obj).__wait_text(obj, function(co)
      for _, other in ipairs(states) do
        if other.co == co then return task_label(other) end
      end
      return "'" .. tostring(co) .. "' (ended)"
    end)
  elseif type(obj) == "table" and obj.inner_sock ~= nil then
    local text = (w.kind == "recvr" and "to read from " or "to write to ") .. socket_text(obj)
    if (obj._closed or text:find("(fd -1,", 1, true)) and not core.close_wakes() then
      closed_seen[1] = true
      text = text .. ", which is closed (its close woke no one, as in cosock 0.2.0)"
    end
    return text
  end
  return "for " .. tostring(obj) .. (w.kind == "recvr" and " to be readable" or " to be writable")
end

-- The chain of joins from st, when it comes back to a task already in it.
local function join_cycle(by_handle, st)
  local seen, chain = {}, {}
  local cur = st
  while cur and not seen[cur] do
    seen[cur] = #chain + 1
    chain[#chain + 1] = task_label(cur)
    local next_st
    for _, w in ipairs(cur.waits) do
      if getmetatable(w.obj) == core.thread_handle then next_st = by_handle[w.obj] end
    end
    cur = next_st
  end
  if cur and seen[cur] == 1 then
    chain[#chain + 1] = task_label(cur)
    return " (a cycle of joins: " .. table.concat(chain, " -> ") .. ")"
  end
  return ""
end

function M.report()
  closed_seen[1] = nil
  local states = core.thread_states()
  local by_handle = {}
  for _, st in ipairs(states) do
    if st.handle then by_handle[st.handle] = st end
  end
  local out = {}
  for _, st in ipairs(states) do
    local parts = {}
    for _, w in ipairs(st.waits) do parts[#parts + 1] = wait_text(states, by_handle, st, w) end
    local line
    if #parts == 0 then
      line = "waits on nothing (it yielded no object and no timeout)"
    else
      line = "waits " .. table.concat(parts, "; ")
    end
    out[#out + 1] = ("\n  task %s %s%s"):format(task_label(st), line, join_cycle(by_handle, st))
  end
  if closed_seen[1] and not core.close_wakes() then out[#out + 1] = CLOSED_HINT end
  return table.concat(out)
end

--- stall() -> report(), for the stall error; in a running trace
--- (cosock.trace, when loaded) also a note "stall" whose detail is the
--- report, so the trace of a deadlock says so and its waits end there.
function M.stall()
  local report = M.report()
  local trace = package.loaded["cosock.trace"]
  if trace and trace.on() then
    pcall(trace.mark, "stall", "every live task waits on something nothing can wake" .. report, 0)
  end
  return report
end

--- blocked() -> text: for the error that ended a loop blocked for ever on a
--- wait on a closed socket (cosock's rule: no stall error there), what each
--- task waits on, as a stall's report says it.
function M.blocked()
  return "\ncosock-native: run was blocked for ever, as cosock 0.2.0 blocks: every live task "
    .. "waits on something that nothing can wake, and a wait on a closed socket kept the "
    .. "loop from reporting a stall" .. M.report()
end

return M
