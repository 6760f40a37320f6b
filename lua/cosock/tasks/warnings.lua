--- cosock.tasks.warnings: the Lua side of cosock.tasks.warnings (the
--- wording, the leftover and unwakeable checks, the report), loaded at the
--- first call of warnings so that a program that only dumps does not carry
--- it. The C side: src/features/tasks_warn.c. Contract: doc/reference.md,
--- cosock.tasks.warnings; what each warning measures: doc/task-dump.md.

local core = require "cosock.core"
local h = require("cosock.tasks")._helpers

local tasks_warn, tasks_unbounded, tasks_site = core.tasks_warn, core.tasks_unbounded, core.tasks_site
local type, tostring, pairs, ipairs, error, getmetatable, pcall, rawget, setmetatable =
  type, tostring, pairs, ipairs, error, getmetatable, pcall, rawget, setmetatable
local format, concat = string.format, table.concat
local trace_id, secs, fd_of, is_ossignal = h.trace_id, h.secs, h.fd_of, h.is_ossignal
local in_lookup, in_pred_wait, handle_namer = h.in_lookup, h.in_pred_wait, h.handle_namer


local KINDS = { "turn", "ready", "leftover" } -- (the C queue's kind numbers)
local FIELDS = { turn = true, ready = true, unwakeable = true, leftover = true, report = true,
                 interval = true }
local UNWAKE_EVERY = 1 -- seconds of the loop's clock between idle checks (a check: ~2 us a task)

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
  if report == nil then return end -- (a report before turned them all off)
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
-- A report may change the settings (warnings(...) or warnings(false)): what
-- is left of the queue is told as they are now, a kind turned off not at all.
local function flush(queue, n, dropped)
  for i = 0, n - 1 do
    local kind, co, name, s = KINDS[queue[4 * i + 1]], queue[4 * i + 2], queue[4 * i + 3], queue[4 * i + 4]
    queue[4 * i + 2], queue[4 * i + 3] = false, false   -- (not kept alive by the queue)
    local info = { co = co, name = name or nil, seconds = s, id = trace_id(co) }
    local limit = limits[kind]
    if limit == nil or (limit ~= true and not (s > limit)) then
      kind = nil                                        -- (off now, or within the limit now)
    end
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
  if dropped > 0 and (limits.turn or limits.ready or limits.leftover) then
    warn("dropped", format("%d warnings of one pass were not reported (the queue was full)", dropped),
      { seconds = 0 })
  end
end

-- Why a wait can never end, or nil (the stall report's reasoning:
-- cosock.deadlock; only what is certain while other tasks still run).
local function never_wakes(rec, by_handle)
  if #rec.waits == 0 then
    if rec.timeout ~= nil or in_lookup(rec.co) or in_pred_wait(rec.co) then return nil end
    return "waits on nothing (it yielded no object and no timeout)"
  end
  -- (a predicate's or a lookup's wait names no object below: it may wake)
  local close_wakes = core.close_wakes()
  local channel = package.loaded["cosock.channel"]
  local why = {}
  for _, w in ipairs(rec.waits) do
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
      if by_handle[obj] == rec then text = "a join of itself" end
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

-- Called by the C side while the loop is idle, at most once per interval:
-- looks at the tasks that wait with no deadline (tasks_unbounded: their
-- waits only).
local function check()
  local recs = tasks_unbounded()
  local _, by_handle = handle_namer(recs)
  for _, rec in ipairs(recs) do
    if not limits.unwakeable then return end  -- (a report turned it off)
    local why = never_wakes(rec, by_handle)
    if why then
      warn("unwakeable", format("task %s %s (spawned at %s)", label(rec.name, rec.co), why,
        tasks_site(rec.slot) or "?"), { co = rec.co, name = rec.name, id = trace_id(rec.co) })
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

-- Raises at the caller of cosock.tasks.warnings, `depth` calls up from the
-- function below (a number is shown for a limit: "got -1").
local function bad(depth, field, expected, v, show)
  error(format("bad argument #1 to 'warnings' (%s: %s expected, got %s)", field, expected,
    v ~= v and "NaN" or show and type(v) == "number" and tostring(v) or type(v)), depth + 3)
end

local function check_limit(opts, field)
  local v = opts[field]
  if v == nil or v == false then return nil end
  if type(v) ~= "number" or not (v > 0) or v == math.huge then
    bad(2, field, "number of seconds > 0 (or false)", v, true)
  end
  return v
end

--- warnings(opts | false): turns the warnings of opts on (each off unless
--- given), all others off; false: all off.
return function(opts)
  if opts == false then
    limits, report = {}, nil
    tasks_warn()
    track_timers(false)
    return
  end
  if type(opts) ~= "table" then
    error(format("bad argument #1 to 'warnings' (table or false expected, got %s)", type(opts)), 3)
  end
  for k in pairs(opts) do
    if not FIELDS[k] then
      error(format("bad argument #1 to 'warnings' (unknown field %s: turn, ready, unwakeable, "
        .. "leftover, report, interval)", tostring(k)), 3)
    end
  end
  local turn, ready, interval = check_limit(opts, "turn"), check_limit(opts, "ready"),
    check_limit(opts, "interval")
  for _, field in ipairs { "unwakeable", "leftover" } do
    local v = opts[field]
    if v ~= nil and type(v) ~= "boolean" then bad(1, field, "boolean", v) end
  end
  if opts.report ~= nil and type(opts.report) ~= "function" then bad(1, "report", "function", opts.report) end
  limits = { turn = turn, ready = ready, interval = interval or UNWAKE_EVERY,
             leftover = opts.leftover == true or nil, unwakeable = opts.unwakeable == true or nil }
  report = opts.report or default_report
  seen = setmetatable({}, { __mode = "k" })
  tasks_warn(turn, ready, opts.leftover == true, opts.unwakeable and limits.interval or nil, flush, check)
  track_timers(opts.leftover == true)
end
