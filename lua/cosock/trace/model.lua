-- cosock.trace.model: turns a trace's events (cosock.trace.file.read, or
-- cosock.trace.events()) into what the views draw: per task its spans (run:
-- a turn; wait: from the turn's end to the wake that ended it, `what` it
-- waited on; ready: woken, not yet resumed), the wakes that link one task's
-- turn to another's, the loop's polls and timers, the notes.
--   build(trace) -> model (fields below); trace = {meta = {}, events = {}}
-- A span is {kind =, task =, t0 =, t1 =, ...}; a span still open when the
-- trace ends is closed at its end time with open = true.

local M = {}

local function new_task(model, id, t)
  local k = { id = id, name = "task " .. id, site = "?", parent = 0, spawn_t = t,
    spans = {}, busy = 0, waited = 0, ready = 0, turns = 0 }
  model.by_id[id] = k
  model.tasks[#model.tasks + 1] = k
  return k
end

local function open(k, kind, t)
  local s = { kind = kind, task = k.id, t0 = t }
  k.spans[#k.spans + 1] = s
  k.cur = s
  return s
end

local function close(k, t)
  local s = k.cur
  if not s then return nil end
  s.t1 = t
  local d = t - s.t0
  if s.kind == "run" then k.busy = k.busy + d
  elseif s.kind == "wait" then k.waited = k.waited + d
  else k.ready = k.ready + d end
  k.cur = nil
  return s
end

function M.build(trace)
  if type(trace) ~= "table" or type(trace.events) ~= "table" then
    error("bad argument #1 to 'build' (a trace {meta =, events =} expected)", 2)
  end
  local events, meta = trace.events, trace.meta or {}
  local model = { meta = meta, dropped = tonumber(meta.dropped) or 0, tasks = {}, by_id = {},
    wakes = {}, polls = {}, timers = {}, notes = {}, nevents = #events,
    t0 = events[1] and events[1].t or 0, t1 = events[1] and events[1].t or 0 }
  local by_id = model.by_id
  local function task(id, t) return by_id[id] or new_task(model, id, t) end

  for _, e in ipairs(events) do
    local t, kind, id = e.t, e.kind, e.task
    if t < model.t0 then model.t0 = t end
    if t > model.t1 then model.t1 = t end
    if kind == "poll" then
      model.polls[#model.polls + 1] = e
    elseif kind == "timers" then
      model.timers[#model.timers + 1] = e
    elseif kind == "note" then
      model.notes[#model.notes + 1] = e
      if id ~= 0 then task(id, t) end
    elseif id ~= 0 then
      local k = task(id, t)
      if kind == "spawn" then
        k.name = e.name or k.name
        k.site = e.site or "?"
        k.parent = e.parent or 0
        k.spawn_t = t
      elseif kind == "run" then
        close(k, t)
        local s = open(k, "run", t)
        k.turns = k.turns + 1
        s.turn = k.turns
        local w = k.woken
        k.woken = nil
        if w then
          w.to = s
          s.woken_by = w
          -- How many wakes, each from the turn the previous one started,
          -- lead to this turn.
          s.depth = w.from and (w.from.depth + 1) or 0
        else
          s.depth = 0
        end
      elseif kind == "wait" then
        close(k, t)
        local s = open(k, "wait", t)
        s.what, s.detail, s.timeout = e.what or "other", e.detail, e.timeout
      elseif kind == "wake" then
        local w = { t = t, task = id, cause = e.cause or "other", by = e.by or 0, detail = e.detail }
        model.wakes[#model.wakes + 1] = w
        local waker = w.by ~= 0 and by_id[w.by]
        if waker and waker.cur and waker.cur.kind == "run" then w.from = waker.cur end
        local cur = k.cur
        if cur and cur.kind == "wait" then
          -- It ends the wait: the next turn is this wake's.
          close(k, t).ended_by = w
          open(k, "ready", t).wake = w
          k.woken = w
        else
          -- Already ready, or woken during its own turn: the first wake
          -- is the one its next turn answers.
          if not k.woken then k.woken = w end
          if cur == nil and not k.end_t then open(k, "ready", t).wake = w end
        end
      elseif kind == "end" then
        close(k, t)
        k.end_t, k.how, k.error = t, e.how, e.error
      end
    end
  end
  for _, k in ipairs(model.tasks) do
    local s = close(k, model.t1)
    if s then s.open = true end
    k.woken = nil
  end
  table.sort(model.tasks, function(a, b) return a.id < b.id end)
  return model
end

-- A task's label: "#3 worker".
function M.label(model, id)
  if type(model) ~= "table" or type(model.by_id) ~= "table" then
    error(("bad argument #1 to 'label' (a model of cosock.trace.model.build expected, got %s)"):format(type(model)), 2)
  end
  if id == 0 then return "main" end
  local k = model.by_id[id]
  return "#" .. id .. (k and (" " .. k.name) or "")
end

-- For the public functions of the reader modules (summary, chrome, html):
-- arg(t, fname [, level]) -> the model of t (a trace, or a model already);
-- opts_arg(opts, n, fname [, level]) -> opts or {}. Anything else is a clear
-- error at the caller of fname.
function M.arg(t, fname, level)
  if type(t) ~= "table" or (t.by_id == nil and type(t.events) ~= "table") then
    error(("bad argument #1 to '%s' (a trace {meta =, events =} or its model expected, got %s)"):format(
      fname, type(t)), (level or 2) + 1)
  end
  return t.by_id and t or M.build(t)
end

function M.opts_arg(opts, n, fname, level)
  if opts ~= nil and type(opts) ~= "table" then
    error(("bad argument #%d to '%s' (table or nil expected, got %s)"):format(n, fname, type(opts)), (level or 2) + 1)
  end
  return opts or {}
end

return M
