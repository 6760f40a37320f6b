-- cosock.trace.chrome: a trace in the Chrome trace event format (JSON
-- object form), which Chromium's about:tracing and Perfetto open. One
-- process "cosock"; each task a thread (tid = its trace id, named by
-- thread_name metadata "#id name"); the loop is thread 0 ("loop": its
-- polls as "poll" spans, timers fired as instants). Each task's turns are
-- complete ("X") events named "run", its waits "wait <what>" (args: detail,
-- timeout, what ended it), its time between wake and turn "ready"; each wake
-- a flow ("s" at the waker's turn, or on the loop track for readiness and
-- timers; "f" at the woken task's next turn). Notes and task ends are
-- instants. otherData carries the meta lines and the dropped count; a trace
-- that dropped events also gets a global instant saying so at its end.
--   export(trace_or_model) -> JSON text
--   write(trace_or_model, path)

local json = require "cosock.trace.json"
local model_of = require "cosock.trace.model"

local model_arg, opts_arg = model_of.arg, model_of.opts_arg

local M = {}

local PID = 1

-- Seconds since the trace's start, in microseconds (Chrome's unit).
local function us(m, t) return ("%.3f"):format((t - m.t0) * 1e6) end

local function ev(fields, args)
  -- The common fields in a fixed order, for a readable file.
  local parts = {}
  for _, kv in ipairs(fields) do
    local v = kv[2]
    parts[#parts + 1] = json.string(kv[1]) .. ":" .. (kv[3] and v or json.encode(v))
  end
  if args then parts[#parts + 1] = '"args":' .. json.encode(args) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function span_args(m, s)
  local a = {}
  if s.kind == "wait" then
    a.what, a.detail, a.timeout = s.what, s.detail, s.timeout
  end
  local w = s.ended_by or s.wake
  if w then
    a.cause = w.cause
    a.by = model_of.label(m, w.by)
    a.wake_detail = w.detail
  end
  if s.kind == "run" then a.turn = s.turn end
  if s.open then a.unfinished = true end
  return a
end

local function span_name(s)
  if s.kind == "wait" then return "wait " .. s.what end
  return s.kind
end

function M.export(t)
  local m = model_arg(t, "export")
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(ev({ { "name", "process_name" }, { "ph", "M" }, { "pid", PID } }, { name = "cosock" }))
  add(ev({ { "name", "thread_name" }, { "ph", "M" }, { "pid", PID }, { "tid", 0 } }, { name = "loop" }))
  add(ev({ { "name", "thread_sort_index" }, { "ph", "M" }, { "pid", PID }, { "tid", 0 } }, { sort_index = -1 }))
  for _, k in ipairs(m.tasks) do
    add(ev({ { "name", "thread_name" }, { "ph", "M" }, { "pid", PID }, { "tid", k.id } },
      { name = "#" .. k.id .. " " .. k.name }))
    add(ev({ { "name", "thread_sort_index" }, { "ph", "M" }, { "pid", PID }, { "tid", k.id } },
      { sort_index = k.id }))
  end
  for _, p in ipairs(m.polls) do
    add(ev({ { "name", "poll" }, { "cat", "loop" }, { "ph", "X" }, { "pid", PID }, { "tid", 0 },
      { "ts", us(m, p.t), true }, { "dur", ("%.3f"):format((p.slept or 0) * 1e6), true } },
      { slept = p.slept, nready = p.nready }))
  end
  for _, p in ipairs(m.timers) do
    add(ev({ { "name", "timers" }, { "cat", "loop" }, { "ph", "i" }, { "s", "t" }, { "pid", PID }, { "tid", 0 },
      { "ts", us(m, p.t), true } }, { count = p.count }))
  end
  for _, k in ipairs(m.tasks) do
    add(ev({ { "name", "spawn" }, { "cat", "task" }, { "ph", "i" }, { "s", "t" }, { "pid", PID }, { "tid", k.id },
      { "ts", us(m, k.spawn_t), true } }, { parent = model_of.label(m, k.parent), site = k.site }))
    for _, s in ipairs(k.spans) do
      add(ev({ { "name", span_name(s) }, { "cat", s.kind }, { "ph", "X" }, { "pid", PID }, { "tid", k.id },
        { "ts", us(m, s.t0), true }, { "dur", ("%.3f"):format((s.t1 - s.t0) * 1e6), true } }, span_args(m, s)))
    end
    if k.end_t then
      add(ev({ { "name", "end " .. tostring(k.how) }, { "cat", "task" }, { "ph", "i" }, { "s", "t" }, { "pid", PID },
        { "tid", k.id }, { "ts", us(m, k.end_t), true } }, { how = k.how, error = k.error }))
    end
  end
  for _, n in ipairs(m.notes) do
    add(ev({ { "name", n.what or "note" }, { "cat", "note" }, { "ph", "i" }, { "s", "t" }, { "pid", PID },
      { "tid", n.task }, { "ts", us(m, n.t), true } }, { detail = n.detail }))
  end
  -- Wakes as flows: from the waker's turn (or the loop) to the woken task's
  -- next turn. A wake whose task never ran again has no arrow.
  local id = 0
  for _, w in ipairs(m.wakes) do
    if w.to then
      id = id + 1
      local from_tid = (w.by ~= 0 and m.by_id[w.by]) and w.by or 0
      add(ev({ { "name", "wake " .. w.cause }, { "cat", "wake" }, { "ph", "s" }, { "id", id }, { "pid", PID },
        { "tid", from_tid }, { "ts", us(m, w.t), true } }, { cause = w.cause, by = model_of.label(m, w.by), detail = w.detail }))
      add(ev({ { "name", "wake " .. w.cause }, { "cat", "wake" }, { "ph", "f" }, { "bp", "e" }, { "id", id },
        { "pid", PID }, { "tid", w.task }, { "ts", us(m, w.to.t0), true } }))
    end
  end
  if m.dropped > 0 then
    add(ev({ { "name", ("TRACE INCOMPLETE: %d events dropped (the buffer was full)"):format(m.dropped) },
      { "cat", "trace" }, { "ph", "i" }, { "s", "g" }, { "pid", PID }, { "tid", 0 }, { "ts", us(m, m.t1), true } }))
  end
  local other = {}
  for k, v in pairs(m.meta) do other[k] = v end
  other.dropped = m.dropped
  other.events = m.nevents
  return '{"displayTimeUnit":"ms","otherData":' .. json.encode(other) .. ',"traceEvents":[\n'
    .. table.concat(out, ",\n") .. "\n]}\n"
end

function M.write(t, path)
  model_arg(t, "write")
  if type(path) ~= "string" then error("bad argument #2 to 'write' (string expected, got " .. type(path) .. ")", 2) end
  if path:find("\0", 1, true) then error("bad argument #2 to 'write' (path without a NUL expected)", 2) end
  local f, err = io.open(path, "wb")
  if not f then error("cosock-trace: cannot write " .. tostring(err), 0) end
  f:write(M.export(t))
  f:close()
end

return M
