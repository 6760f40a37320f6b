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
local deadlock = require "cosock.deadlock"

local tasks_list, tasks_warn, thread_states = core.tasks_list, core.tasks_warn, core.thread_states
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

local function quoted(name)
  return format("%q", tostring(name))
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

-- what, text of a waiting task's wait (st: thread_states', rec: tasks_list's).
local function wait_of(st, rec, name_of)
  local waits = st.waits
  if deadlock.in_pred_wait(st.co) then return "predicate", "predicate (cosock.when)" end
  if #waits == 0 then
    if in_lookup(st.co) then return "lookup", "name lookup" end
    if rec.timeout ~= nil then return "sleep", "sleep" end
    return "yield", "nothing (no object, no timeout)"
  end
  if #waits == 1 then
    if type(waits[1].obj) ~= "table" and type(waits[1].obj) ~= "userdata" and in_lookup(st.co) then
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

-- A namer of handles for the join waits: "'name'" of the live task it is.
local function handle_namer(states)
  local by_handle = {}
  for _, st in ipairs(states) do
    if st.handle then by_handle[st.handle] = st end
  end
  return function(h)
    local st = by_handle[h]
    if st then return quoted(st.info.name or tostring(st.co)) end
    return "(ended) " .. tostring(h)
  end, by_handle
end

--- list() -> an array, one record per live task, in the loop's slot order.
function m.list()
  local recs, states = tasks_list(), thread_states()
  local by_co = {}
  for _, st in ipairs(states) do by_co[st.co] = st end
  local name_of = handle_namer(states)
  local out = {}
  for _, rec in ipairs(recs) do
    local st = by_co[rec.co]
    local r = {
      co = rec.co, slot = rec.slot, state = rec.state, site = rec.site,
      since = rec.since, timeout = rec.timeout, left = rec.left,
      name = st and st.info.name, traceback = st and st.info.traceback,
      handle = st and st.handle, id = trace_id(rec.co),
    }
    if r.since == nil and rec.last_wake then
      r.since = os.time() - rec.last_wake    -- (whole seconds: no turn since this module loaded)
      r.since_whole = true
    end
    if rec.state == "waiting" and st then
      r.what, r.waits = wait_of(st, rec, name_of)
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
  if not ok then error("cosock.tasks.on_signal: " .. tostring(rx), 2) end
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

---------------------------------------------------------------------------
-- warnings
---------------------------------------------------------------------------

local KINDS = { "turn", "ready", "leftover" } -- (the C queue's kind numbers)
local FIELDS = { turn = true, ready = true, unwakeable = true, leftover = true, report = true,
                 interval = true }
local UNWAKE_EVERY = 0.1 -- seconds of the loop's clock between idle checks

local limits = {}       -- the settings in force
local report            -- the function warnings are given to
local seen = setmetatable({}, { __mode = "k" }) -- co -> {kind = true}: the default's once

local function default_report(kind, message, info)
  local key = info.co or info.name or "?"
  local s = seen[key]
  if s == nil then
    s = {}
    seen[key] = s
  end
  if s[kind] then return end
  s[kind] = true
  io.stderr:write("cosock: warning: ", message, "\n")
end

-- Records the warning in the trace when one is on (cosock.trace: optional).
local function trace_mark(kind, message, id)
  local trace = package.loaded["cosock.trace"]
  if type(trace) ~= "table" or type(trace.mark) ~= "function" then return end
  local ok, on = pcall(function() return trace.on() end)
  if ok and on then pcall(trace.mark, "warn-" .. kind, message, id) end
end

local function warn(kind, message, info)
  info.kind = kind
  info.message = message
  trace_mark(kind, message, info.id)
  report(kind, message, info)
end

local function label(name, co)
  if name == nil or name == false then return "'" .. tostring(co) .. "'" end
  return "'" .. tostring(name) .. "'"
end

-- What an ended task left behind: the ossignal receivers it opened and did
-- not close, the timer objects it made (while leftover was on) still pending
-- with a waker set or repeating.
local made_timers = setmetatable({}, { __mode = "k" }) -- timer -> coroutine that made it
local function leftovers(co)
  local found = {}
  local os_mod = package.loaded["cosock.ossignal"]
  if os_mod then
    for rx, owner in pairs(os_mod._owners) do
      if owner == co and not rawget(rx, "_closed") then
        found[#found + 1] = "an open cosock.ossignal receiver (" .. tostring(rx) ..
          "): its signals stay blocked"
      end
    end
  end
  for t, owner in pairs(made_timers) do
    if owner == co then
      local ok, state = pcall(core.timer_info, t)
      if ok and state == "pending" then
        found[#found + 1] = "a pending timer object (" .. tostring(t) .. ")"
      end
    end
  end
  return found
end

-- Called by the C side at the end of a pass's resumes with what it noted.
local function flush(queue, n, dropped)
  for i = 0, n - 1 do
    local kind, co, name, s = KINDS[queue[4 * i + 1]], queue[4 * i + 2], queue[4 * i + 3], queue[4 * i + 4]
    queue[4 * i + 2], queue[4 * i + 3] = false, false   -- (not kept alive by the queue)
    local info = { co = co, name = name or nil, seconds = s, id = trace_id(co) }
    if kind == "turn" then
      info.limit = limits.turn
      warn(kind, format("task %s ran %s s in one turn (limit %s s)", label(name, co), secs(s),
        secs(limits.turn)), info)
    elseif kind == "ready" then
      info.limit = limits.ready
      warn(kind, format("task %s was ready %s s before its turn came (limit %s s)", label(name, co),
        secs(s), secs(limits.ready)), info)
    elseif kind == "leftover" then
      local found = leftovers(co)
      if #found > 0 then
        info.left = found
        warn(kind, format("task %s ended with waits still registered: %s", label(name, co),
          concat(found, "; ")), info)
      end
    end
  end
  if dropped > 0 then
    warn("dropped", format("%d warnings of one pass were not reported (the queue was full)", dropped),
      { seconds = 0 })
  end
end

-- Why a wait can never end, or nil (the stall report's reasoning:
-- cosock.deadlock; only what is certain while other tasks still run).
local function never_wakes(st, rec, by_handle)
  if rec.left ~= nil then return nil end       -- a deadline ends it
  if deadlock.in_pred_wait(st.co) then return nil end
  if #st.waits == 0 then
    if rec.timeout ~= nil or in_lookup(st.co) then return nil end
    return "waits on nothing (it yielded no object and no timeout)"
  end
  local close_wakes = core.close_wakes()
  local channel = package.loaded["cosock.channel"]
  local why = {}
  for _, w in ipairs(st.waits) do
    local obj = w.obj
    local methods = type(getmetatable(obj)) == "table" and getmetatable(obj).__index or nil
    local text
    if channel and methods == channel.receiver then
      if obj.link.closed and #obj.link.queue == 0 and not close_wakes then
        text = "a channel that is closed and empty"
      end
    elseif channel and methods == channel.sender then
      if obj.link.closed and not close_wakes then text = "a channel that is closed" end
    elseif getmetatable(obj) == core.thread_handle then
      local target = by_handle[obj]
      if target == st then text = "a join of itself" end
    elseif type(obj) == "table" and rawget(obj, "inner_sock") ~= nil and not is_ossignal(obj) then
      if not close_wakes and (rawget(obj, "_closed") or fd_of(obj) == "-1") then
        text = "a socket that is closed (fd " .. fd_of(obj) .. ")"
      end
    end
    if text == nil then return nil end         -- (this one may wake it)
    why[#why + 1] = text
  end
  return "waits on " .. concat(why, "; ") .. ", which nothing can wake"
end

-- Called by the C side while the loop is idle, at most once per interval.
local function check()
  local recs, states = tasks_list(), thread_states()
  local by_co = {}
  for _, st in ipairs(states) do by_co[st.co] = st end
  local _, by_handle = handle_namer(states)
  for _, rec in ipairs(recs) do
    local st = by_co[rec.co]
    if rec.state == "waiting" and st then
      local why = never_wakes(st, rec, by_handle)
      if why then
        warn("unwakeable", format("task %s %s (spawned at %s)", label(st.info.name, st.co), why,
          rec.site or "?"), { co = st.co, name = st.info.name, seconds = rec.since, id = trace_id(st.co) })
      end
    end
  end
end

-- The timer constructors, wrapped to note who made each timer while the
-- leftover warning is on.
local timer_wrapped
local function track_timers(on)
  local timer = package.loaded["cosock.timer"] or (on and require "cosock.timer")
  if not timer then return end
  if on and not timer_wrapped then
    timer_wrapped = { timer.create_oneshot, timer.create_interval }
    local oneshot, interval = timer_wrapped[1], timer_wrapped[2]
    timer.create_oneshot = function(...)
      local t = oneshot(...)
      local co = core.current_task()
      if co then made_timers[t] = co end
      return t
    end
    timer.create_interval = function(...)
      local t = interval(...)
      local co = core.current_task()
      if co then made_timers[t] = co end
      return t
    end
  elseif not on and timer_wrapped then
    timer.create_oneshot, timer.create_interval = timer_wrapped[1], timer_wrapped[2]
    timer_wrapped = nil
  end
end

-- (A number is shown for a limit: "got -1".)
local function bad(field, expected, v, show)
  error(format("bad argument #1 to 'warnings' (%s: %s expected, got %s)", field, expected,
    v ~= v and "NaN" or show and type(v) == "number" and tostring(v) or type(v)), 3)
end

local function check_limit(opts, field)
  local v = opts[field]
  if v == nil or v == false then return nil end
  if type(v) ~= "number" or not (v > 0) or v == math.huge then
    bad(field, "number of seconds > 0 (or false)", v, true)
  end
  return v
end

--- warnings(opts | false): turns the warnings of opts on (each off unless
--- given), all others off; false: all off.
function m.warnings(opts)
  if opts == false then
    limits, report = {}, nil
    tasks_warn()
    track_timers(false)
    return
  end
  if type(opts) ~= "table" then
    error(format("bad argument #1 to 'warnings' (table or false expected, got %s)", type(opts)), 2)
  end
  for k in pairs(opts) do
    if not FIELDS[k] then
      error(format("bad argument #1 to 'warnings' (unknown field %s: turn, ready, unwakeable, "
        .. "leftover, report, interval)", tostring(k)), 2)
    end
  end
  local turn, ready, interval = check_limit(opts, "turn"), check_limit(opts, "ready"),
    check_limit(opts, "interval")
  for _, field in ipairs { "unwakeable", "leftover" } do
    local v = opts[field]
    if v ~= nil and type(v) ~= "boolean" then bad(field, "boolean", v) end
  end
  if opts.report ~= nil and type(opts.report) ~= "function" then bad("report", "function", opts.report) end
  limits = { turn = turn, ready = ready, interval = interval or UNWAKE_EVERY }
  report = opts.report or default_report
  seen = setmetatable({}, { __mode = "k" })
  tasks_warn(turn, ready, opts.leftover == true, opts.unwakeable and limits.interval or nil, flush, check)
  track_timers(opts.leftover == true)
end

return m
