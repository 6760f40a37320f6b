--- cosock.trace: a recording of what the loop does (doc/reference.md,
--- "cosock.trace"): each task's spawn, turns, waits, wakes with their cause
--- and end, each poll and the timers fired, kept in a bounded buffer in C
--- (src/features/trace.c). Loaded on first use: a program that never requires
--- it pays nothing, and while no trace is on no point of the pass is on.
---
---   trace.start([opts])  opts.size: events kept (default 65536, >= 16)
---   trace.stop()         stops recording; what was recorded stays
---   trace.on()           true while recording
---   trace.stats()        {size, recorded, dropped, on}
---   trace.events()       the events, in order (tables: t, kind, task, ...)
---   trace.save(path)     writes them in the trace file format
---   trace.mark(kind, message [, task_id])  a "note" event (false while off)
---   trace.task_id([co])  the trace's id of a task, or nil
---
--- COSOCK_TRACE=path (and COSOCK_TRACE_SIZE=n) in the environment: cosock
--- starts a trace when it loads and writes it to path each time run() returns
--- or raises, and when the Lua state closes.

local core = require "cosock.core"
core.open "trace" -- (its C functions: added to cosock.core on first use)

local type, error, tostring, format, floor = type, error, tostring, string.format, math.floor
local concat, open, ostime = table.concat, io.open, os.time

local c_start, c_stop, c_stats, c_events = core.trace_start, core.trace_stop, core.trace_stats,
  core.trace_events
local c_mark, c_task_id, c_label, c_cause = core.trace_mark, core.trace_task_id, core.trace_label,
  core.trace_cause

local trace = {}

local DEFAULT_SIZE = 65536
local started                 -- os.time() when the trace started
local env_trace = false       -- the trace on is COSOCK_TRACE's (a program's start replaces it)

-- Argument checks: "bad argument #n to 'cosock.trace.<fname>' (...)", at
-- the caller of the public function.
local function got(v)
  if type(v) == "number" then
    if v ~= v then return "NaN" end
    return tostring(v)
  end
  if type(v) == "string" then return format("%q", v) end
  return type(v)
end

local function bad(n, fname, what, v)
  error(format("bad argument #%d to 'cosock.trace.%s' (%s, got %s)", n, fname, what, got(v)), 3)
end

local function is_integer(v)
  return type(v) == "number" and v == v and v == floor(v) and v > -2^53 and v < 2^53
end

--- start([opts]): starts a new trace (raises when one is on). Starting
--- clears what an earlier trace recorded.
function trace.start(opts)
  if opts ~= nil and type(opts) ~= "table" then bad(1, "start", "table or nil expected", opts) end
  for k in pairs(opts or {}) do -- (a misspelt size must not give the default silently)
    if k ~= "size" then
      error(format("bad argument #1 to 'cosock.trace.start' (unknown option %s: size expected)", got(k)), 2)
    end
  end
  local size = opts and opts.size
  if size == nil then size = DEFAULT_SIZE end
  if not is_integer(size) or size < 16 or size > 2147483647 then
    bad(1, "start", "opts.size must be an integer from 16 to 2147483647", size)
  end
  if c_stats().on then
    if not env_trace then error("cosock.trace.start: a trace is on already (trace.stop() first)", 2) end
    c_stop() -- (COSOCK_TRACE's: the program's own trace takes its place)
  end
  local ok, err = pcall(c_start, size) -- (no memory for the buffer: raised as the caller's)
  if not ok then error((tostring(err):gsub("^[^\n]-:%d+: ", "")), 2) end
  started = ostime()
  env_trace = false
  -- What the waits and wakes written in Lua label themselves through (nil while off).
  core.trace_wait, core.trace_wake = c_label, c_cause
end

--- stop(): stops recording (idempotent); the events stay readable.
function trace.stop()
  c_stop()
  core.trace_wait, core.trace_wake = nil, nil
end

--- on() -> whether a trace is recording.
function trace.on()
  return c_stats().on
end

--- stats() -> {size=, recorded=, dropped=, on=}: dropped counts the events
--- the full buffer could not keep (it keeps the first size).
function trace.stats()
  local s = c_stats()
  return { size = s.size, recorded = s.recorded, dropped = s.dropped, on = s.on }
end

--- events() -> the array of event tables, in order.
function trace.events()
  return c_events()
end

--- mark(kind, message [, task_id]) -> true, or false while no trace is on:
--- a "note" event (what = kind, detail = message) of the task (default:
--- the one running, 0 outside any).
function trace.mark(kind, message, task_id)
  if type(kind) ~= "string" then bad(1, "mark", "string expected", kind) end
  if type(message) ~= "string" and type(message) ~= "number" then
    bad(2, "mark", "string or number expected", message)
  end
  -- (ids are C ints: a bigger one came back negative, a file no reader takes)
  if task_id ~= nil and not (is_integer(task_id) and task_id >= 0 and task_id <= 2147483647) then
    bad(3, "mark", "task id (an integer from 0 to 2147483647) or nil expected", task_id)
  end
  return c_mark(kind, message, task_id)
end

--- task_id([co]) -> the trace's id of the task whose coroutine co is
--- (default: the running task), or nil (not a task, or no trace).
function trace.task_id(co)
  if co ~= nil and type(co) ~= "thread" then bad(1, "task_id", "coroutine or nil expected", co) end
  return c_task_id(co)
end

-- ---- the file format (doc/reference.md, "The trace file") ----

-- A field: TAB, newline, carriage return and backslash escaped; nil or
-- empty is "-".
local ESC = { ["\t"] = "\\t", ["\n"] = "\\n", ["\r"] = "\\r", ["\\"] = "\\\\" }
local function field(v)
  if v == nil or v == "" then return "-" end
  if type(v) == "number" then
    if v == floor(v) and v > -2^53 and v < 2^53 then return format("%d", v) end
    return format("%.9f", v)
  end
  return (tostring(v):gsub("[\t\n\r\\]", ESC))
end
local function seconds(v)
  if v == nil then return "-" end
  return format("%.9f", v)
end

-- Each kind's fields, in the file's order (seconds: written %.9f).
local FIELDS = {
  spawn = { "parent", "name", "site" },
  run = {},
  wait = { "what", "detail", "timeout" },
  wake = { "cause", "by", "detail" },
  ["end"] = { "how", "error" },
  poll = { "slept", "nready" },
  timers = { "count" },
  note = { "what", "detail" },
}
local SECONDS = { timeout = true, slept = true }

local function event_line(e)
  local parts = { "E", format("%.9f", e.t), e.kind, field(e.task) }
  local names = FIELDS[e.kind] or {}
  for i = 1, #names do
    local k = names[i]
    parts[#parts + 1] = SECONDS[k] and seconds(e[k]) or field(e[k])
  end
  return concat(parts, "\t")
end

--- save(path) -> true: writes the trace (while on, or after stop) to path.
--- Raises when the file cannot be written.
function trace.save(path)
  if type(path) ~= "string" then bad(1, "save", "string expected", path) end
  -- (io.open would cut the name at the NUL: another file than the one named)
  if path:find("\0", 1, true) then bad(1, "save", "path without a NUL expected", path) end
  local s = c_stats()
  local f, err = open(path, "w")
  if not f then error("cosock.trace.save: cannot write the trace: " .. tostring(err), 2) end
  local lines = {
    "cosock-trace 1",
    "M\tclock\t" .. s.clock,
    "M\tsize\t" .. s.size,
    "M\trecorded\t" .. s.recorded,
    "M\tdropped\t" .. s.dropped,
    "M\tlua\t" .. field(_VERSION),
    "M\tstarted\t" .. field(started or 0),
    "",
  }
  local ok, werr = f:write(concat(lines, "\n"))
  local PART = 4096 -- (events made into tables and written at a time)
  local first = 1
  while ok and first <= s.recorded do
    local rok, events = pcall(c_events, first, PART)
    -- (a finalizer that resets or restarts the trace between two parts)
    if not rok or c_stats().gen ~= s.gen then
      f:close()
      error("cosock.trace.save: the trace was reset or started again while it was written", 2)
    end
    lines = {}
    for i = 1, #events do lines[i] = event_line(events[i]) end
    lines[#lines + 1] = ""
    ok, werr = f:write(concat(lines, "\n"))
    first = first + PART
  end
  local cok, cerr = f:close()
  if not ok or not cok then
    error("cosock.trace.save: cannot write the trace: " .. tostring(werr or cerr), 2)
  end
  return true
end

-- ---- COSOCK_TRACE ------------------------------------------------------------

-- Writes the trace to path, telling standard error when it cannot.
local function save_quietly(path)
  local ok, err = pcall(trace.save, path)
  if not ok then io.stderr:write("cosock: COSOCK_TRACE: ", tostring(err), "\n") end
end

--- _from_env(cosock, path, size): what cosock does when COSOCK_TRACE is set:
--- starts the trace, and saves it each time cosock.run returns or raises and
--- when the Lua state closes. (Internal: called by cosock.lua.)
function trace._from_env(cosock, path, size)
  local n = DEFAULT_SIZE
  if size ~= nil and size ~= "" then
    n = tonumber(size)
    if not is_integer(n) or n < 16 or n > 2147483647 then
      error(format("cosock: COSOCK_TRACE_SIZE must be an integer from 16 to 2147483647, got %q", size), 0)
    end
  end
  trace.start({ size = n })
  env_trace = true
  local run, reset = cosock.run, cosock.reset
  cosock.run = function()
    local ok, err = pcall(run)
    save_quietly(path)
    if not ok then error(err, 0) end
  end
  -- reset() forgets the trace with everything else: the program goes on
  -- traced, from a new trace.
  cosock.reset = function()
    reset()
    if not trace.on() then
      trace.start({ size = n })
      env_trace = true
    end
  end
  -- os.exit(code) does not close the state (no finalizer runs): a step host
  -- that ends with it saves first.
  local exit = os.exit
  os.exit = function(...)
    save_quietly(path)
    return exit(...)
  end
  -- When the state closes (a step host, or a program that never returns
  -- from run): a finalizer kept alive by this module.
  local gc = function() save_quietly(path) end
  if newproxy then -- (5.1, LuaJIT: only userdata have finalizers)
    local p = newproxy(true)
    getmetatable(p).__gc = gc
    trace._closer = p
  else
    trace._closer = setmetatable({}, { __gc = gc })
  end
end

return trace
