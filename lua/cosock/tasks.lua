--- cosock.tasks: every task on demand, and warnings in the style of
--- tokio-console (doc/task-dump.md is the page; doc/reference.md the contract).
---
--- list() -> { {name, site, state, what, waits, timeout, left, since,
---              traceback, id, co, slot, handle}, ... }  one per live task
--- dump([out])                 every task as text (default: io.stderr:write)
--- on_signal([signal [, out]]) -> stop: the dump each time the process gets
---                             the signal (default "USR1"), through cosock.ossignal
--- warnings{turn = s, ready = s, unwakeable = true, leftover = true,
---           interval = s, report = fn} | warnings(false)
---
--- Loaded on first use (require "cosock.tasks", or the field cosock.tasks);
--- loading it turns on the turn stamps of src/features/tasks_warn.c (one
--- coarse clock read per resume: doc/task-dump.md has the figures).

local core = require "cosock.core"
core.open "tasks" -- (its C functions: added to cosock.core on first use)
local compat = require "cosock.compat"
-- cosock.deadlock (the stall report: how a predicate wait is told) is loaded
-- at the first list or check, not with this module.
local function in_pred_wait(co) return require("cosock.deadlock").in_pred_wait(co) end

local tasks_list = core.tasks_list
local type, tostring, pairs, ipairs, error, getmetatable, pcall, rawget, setmetatable =
  type, tostring, pairs, ipairs, error, getmetatable, pcall, rawget, setmetatable
local format, concat = string.format, table.concat

local m = {}

-- The trace's id of a task while cosock.trace is loaded and gives one (that
-- module is optional: any failure of it is no id).
local function trace_id(co)
  local trace = package.loaded["cosock.trace"]
  if type(trace) ~= "table" or type(trace.task_id) ~= "function" then return nil end
  local ok, id = pcall(trace.task_id, co)
  if ok then return id end
  return nil
end

local function secs(s)
  if s == nil then return "?" end
  if s >= 100 then return format("%.0f", s) end
  if s >= 1 then return format("%.1f", s) end
  return format("%.3f", s)
end

local function mt_name(obj)
  local mt = getmetatable(obj)
  return type(mt) == "table" and rawget(mt, "__name") or nil
end

-- The fd of a socket-like object (a wrapper's inner socket, or the object).
local function fd_of(obj)
  local inner = type(obj) == "table" and rawget(obj, "inner_sock") or obj
  local ok, fd = pcall(function() return inner:getfd() end)
  if not ok or type(fd) ~= "number" then return "?" end
  if compat.math_type(fd) == "float" and fd == math.floor(fd) then fd = compat.tointeger(fd) end
  return tostring(fd)
end

local function is_ossignal(obj)
  local os_mod = package.loaded["cosock.ossignal"]
  return os_mod ~= nil and type(obj) == "table" and os_mod._is_receiver(obj)
end

-- (%q writes a newline as a backslash and a newline: "\n" keeps a header on one line)
local function quoted(name)
  return (format("%q", tostring(name)):gsub("\\\n", "\\n"))
end

-- What one waited object is: kind (the trace's words) and a short text.
local function object_kind(w, name_of)
  local obj, dir = w.obj, w.kind == "sendr" and "send" or "recv"
  local channel = package.loaded["cosock.channel"]
  local methods = type(getmetatable(obj)) == "table" and getmetatable(obj).__index or nil
  local name = mt_name(obj)
  if channel and methods == channel.receiver then return "channel-recv", "channel receive"
  elseif channel and (methods == channel.sender or name == "cosock.channel send") then
    return "channel-send", "channel send"
  elseif getmetatable(obj) == core.thread_handle then
    return "join", "join task " .. name_of(obj)
  elseif name == "cosock.sync wait" then
    local kind = type(obj.sem) == "table" and obj.sem.kind or "lock"
    return "lock", tostring(kind)
  elseif name == "cosock.scope wait" then return "scope", "the end of its scope's tasks"
  elseif name == "cosock.signal waiter" then return "signal", "signal " .. quoted(obj.name)
  elseif name == "cosock.dns lookup" then return "lookup", "name lookup"
  elseif core.timer_methods and methods == core.timer_methods then return "timer", "timer object"
  elseif is_ossignal(obj) then return "ossignal", "ossignal fd " .. fd_of(obj)
  elseif type(obj) == "table" and rawget(obj, "inner_sock") ~= nil then
    return dir, dir .. " fd " .. fd_of(obj)
  elseif type(obj) == "userdata" and pcall(function() return obj.getfd end) then
    return dir, dir .. " fd " .. fd_of(obj)
  elseif type(obj) == "table" and package.loaded["cosock.sim.sock"] and rawget(obj, "_self") ~= nil
    and rawget(obj, "_born") ~= nil then -- (a socket of cosock.sim: sim/sock.lua's init)
    return dir, dir .. " " .. tostring(obj)
  end
  return "other", dir .. " " .. tostring(obj)
end

-- The C functions whose bare wait (no record) names no object of its own:
-- the first argument is a host name or an address.
local function in_lookup(co)
  local top = debug.getinfo(co, 0, "f")
  if not top then return false end
  for _, f in ipairs { core.dns_getaddrinfo, core.dns_gethost, core.dns_nameinfo } do
    if f and top.func == f then return true end
  end
  return false
end

-- what, text of a waiting task's wait (rec: tasks_list's record).
local function wait_of(rec, name_of)
  local waits = rec.waits
  if in_pred_wait(rec.co) then return "predicate", "predicate (cosock.when)" end
  if #waits == 0 then
    if in_lookup(rec.co) then return "lookup", "name lookup" end
    if rec.timeout ~= nil then return "sleep", "sleep" end
    return "yield", "nothing (no object, no timeout)"
  end
  if #waits == 1 then
    if type(waits[1].obj) ~= "table" and type(waits[1].obj) ~= "userdata" and in_lookup(rec.co) then
      return "lookup", "name lookup"
    end
    return object_kind(waits[1], name_of)
  end
  local parts = {}
  for i, w in ipairs(waits) do
    local _, text = object_kind(w, name_of)
    parts[i] = text
  end
  return "select", "select of " .. #waits .. ": " .. concat(parts, ", ")
end

-- A namer of handles for the join waits: "'name'" of the live task it is;
-- and the records by handle.
local function handle_namer(recs)
  local by_handle = {}
  for _, rec in ipairs(recs) do
    if rec.handle then by_handle[rec.handle] = rec end
  end
  return function(h)
    local rec = by_handle[h]
    if rec then return quoted(rec.name or tostring(rec.co)) end
    return "(ended) " .. tostring(h)
  end, by_handle
end

--- list() -> an array, one record per live task, in the loop's slot order.
function m.list()
  local recs = tasks_list(true)
  local name_of = handle_namer(recs)
  local out = {}
  for _, rec in ipairs(recs) do
    local r = {
      co = rec.co, slot = rec.slot, state = rec.state, site = rec.site,
      since = rec.since, timeout = rec.timeout, left = rec.left,
      name = rec.name, traceback = rec.traceback, handle = rec.handle, id = trace_id(rec.co),
    }
    if r.since == nil and rec.last_wake then
      r.since = os.time() - rec.last_wake    -- (whole seconds: no turn since this module loaded)
      r.since_whole = true
    end
    if rec.state == "waiting" then
      r.what, r.waits = wait_of(rec, name_of)
      if rec.timeout ~= nil and r.what ~= "sleep" then
        r.waits = r.waits .. ", timeout " .. format("%.4g", rec.timeout) .. " s"
      elseif r.what == "sleep" then
        r.waits = "sleep " .. format("%.4g", rec.timeout) .. " s"
      end
    end
    out[#out + 1] = r
  end
  return out
end

-- The header line of one task.
local function header(r)
  local parts = { "task ", tostring(r.id or r.slot) }
  if r.name ~= nil then parts[#parts + 1] = " " .. quoted(r.name) end
  parts[#parts + 1] = " " .. r.state
  if r.since ~= nil then parts[#parts + 1] = " " .. secs(r.since) .. " s" end
  if r.waits then parts[#parts + 1] = " on " .. r.waits end
  parts[#parts + 1] = " (spawned at " .. (r.site or "?") .. ")"
  return concat(parts)
end

-- out: a function (called with text), a file (its write), or nil (stderr).
local function writer(out, fname, arg)
  if out == nil then
    return function(s) io.stderr:write(s) end
  elseif type(out) == "function" then
    return out
  elseif (type(out) == "userdata" or type(out) == "table") and pcall(function() return out.write end) and
    type(out.write) == "function" then
    return function(s) out:write(s) end
  end
  error(format("bad argument #%d to '%s' (function or file expected, got %s)", arg, fname, type(out)), 3)
end

--- dump([out]): every task, a header line and its traceback each.
function m.dump(out)
  local write = writer(out, "dump", 1)
  local list = m.list()
  local text = { format("cosock: %d task%s\n", #list, #list == 1 and "" or "s") }
  for _, r in ipairs(list) do
    text[#text + 1] = "\n" .. header(r) .. "\n" .. (r.traceback or "") .. "\n"
  end
  write(concat(text))
end

---------------------------------------------------------------------------
-- on_signal
---------------------------------------------------------------------------

-- The handles of the tasks on_signal spawned (weak: each task's own function
-- holds its handle while it runs), to know when they are all that is left.
local signal_handles = setmetatable({}, { __mode = "k" })
m._poll = 1 -- seconds between looks at whether the other tasks ended (the specs shorten it)

local function only_signal_tasks_left()
  local mine = 0
  for h in pairs(signal_handles) do
    if h:is_alive() then mine = mine + 1 end
  end
  return core.stats().tasks <= mine
end

--- on_signal([signal [, out]]) -> stop(): a task that writes the dump each
--- time the process gets the signal; it ends (and run with it, when nothing
--- else is left) within a second after the last other task ended, or at
--- once when stop() is called.
function m.on_signal(sig, out)
  if sig ~= nil and type(sig) ~= "string" then
    error(format("bad argument #1 to 'on_signal' (signal name expected, got %s)", type(sig)), 2)
  end
  local write = writer(out, "on_signal", 2)
  local ossignal = require "cosock.ossignal"
  local ok, rx = pcall(ossignal.receiver, sig or "USR1")
  if not ok then
    error("cosock.tasks.on_signal: " .. tostring(rx):gsub("^[^\n:]+:%d+: ", ""), 2)
  end
  rx:settimeout(m._poll)
  local stopped, handle = false, nil
  handle = core.spawn(function()
    local _ = handle                           -- (kept while the task runs)
    while not stopped do
      local got, err = rx:receive()
      if got then
        m.dump(write)
      elseif err == "closed" or only_signal_tasks_left() then
        break
      end
    end
    rx:close()
  end, "cosock.tasks.on_signal " .. (sig or "USR1"))
  signal_handles[handle] = true
  return function()
    stopped = true
    rx:close()
  end
end

--- warnings(opts | false): the warnings (lua/cosock/tasks/warnings.lua,
--- loaded at the first call).
function m.warnings(opts)
  local set = require "cosock.tasks.warnings"
  set(opts)                                    -- (not a tail call: its errors name our caller)
end

-- For cosock.tasks.warnings (internal).
m._helpers = {
  trace_id = trace_id, secs = secs, fd_of = fd_of, is_ossignal = is_ossignal,
  in_lookup = in_lookup, in_pred_wait = in_pred_wait, handle_namer = handle_namer,
}

return m
