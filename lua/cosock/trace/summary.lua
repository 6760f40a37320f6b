-- cosock.trace.summary: what cosock-trace prints about a trace: the tasks
-- by busy time, the longest waits and what ended them, the longest chains
-- of wakes (a turn of A woke B, whose next turn woke C, ...), the errors,
-- the notes, and the dropped count, loudly.
--   busiest(model, n), longest_waits(model, n), chains(model, n): the lists
--   text(trace_or_model [, {top = n, name = file}]) -> the summary as text

local model_of = require "cosock.trace.model"

local model_arg, opts_arg = model_of.arg, model_of.opts_arg

local M = {}

local function s(x) return ("%.6f s"):format(x) end

-- A message on one line (an error's traceback, a detail with a TAB).
local function oneline(x) return (tostring(x):gsub("[\r\n\t]+", " ")) end

-- The tasks, busiest first (ties: by id).
-- The model and the count n of a list function fname (clear errors at its caller).
local function list_args(m, n, fname)
  m = model_arg(m, fname, 3)
  if n ~= nil and (type(n) ~= "number" or n ~= n or n < 0) then
    error(("bad argument #2 to '%s' (number >= 0 or nil expected, got %s)"):format(fname,
      type(n) == "number" and tostring(n) or type(n)), 3)
  end
  return m, n
end

function M.busiest(m, n)
  m, n = list_args(m, n, "busiest")
  local list = {}
  for i, k in ipairs(m.tasks) do list[i] = k end
  table.sort(list, function(a, b)
    if a.busy ~= b.busy then return a.busy > b.busy end
    return a.id < b.id
  end)
  for i = #list, (n or #list) + 1, -1 do list[i] = nil end
  return list
end

-- The wait spans, longest first (ties: the earlier first).
function M.longest_waits(m, n)
  m, n = list_args(m, n, "longest_waits")
  local list = {}
  for _, k in ipairs(m.tasks) do
    for _, sp in ipairs(k.spans) do
      if sp.kind == "wait" then list[#list + 1] = sp end
    end
  end
  local total = #list
  table.sort(list, function(a, b)
    local da, db = a.t1 - a.t0, b.t1 - b.t0
    if da ~= db then return da > db end
    if a.t0 ~= b.t0 then return a.t0 < b.t0 end
    return a.task < b.task
  end)
  for i = #list, (n or #list) + 1, -1 do list[i] = nil end
  return list, total
end

-- The longest chains of wakes: each a list of wakes, the first from a turn
-- that no task's wake started. A turn shown in one chain starts no other.
function M.chains(m, n)
  m, n = list_args(m, n, "chains")
  local turns = {}
  for _, k in ipairs(m.tasks) do
    for _, sp in ipairs(k.spans) do
      if sp.kind == "run" and sp.depth and sp.depth > 0 then turns[#turns + 1] = sp end
    end
  end
  table.sort(turns, function(a, b)
    if a.depth ~= b.depth then return a.depth > b.depth end
    if a.t0 ~= b.t0 then return a.t0 < b.t0 end
    return a.task < b.task
  end)
  local used, out = {}, {}
  for _, turn in ipairs(turns) do
    if #out >= (n or math.huge) then break end
    if not used[turn] then
      local chain, cur = {}, turn
      while cur and cur.woken_by and cur.woken_by.from do
        used[cur] = true
        table.insert(chain, 1, cur.woken_by)
        cur = cur.woken_by.from
      end
      if cur then used[cur] = true end
      out[#out + 1] = chain
    end
  end
  return out
end

local function who(m, id, cause)
  if id == 0 then return cause == "spawn" and "the main program" or "the loop" end
  return model_of.label(m, id)
end

local function ended_by(m, w)
  if not w then return "still waiting when the trace ends" end
  return ("ended by %s from %s%s"):format(w.cause, who(m, w.by, w.cause), w.detail and (" (" .. w.detail .. ")") or "")
end

local function pad(text, width)
  if #text >= width then return text end
  return text .. (" "):rep(width - #text)
end

local function pct(part, whole)
  if whole <= 0 then return "-" end
  return ("%.1f%%"):format(100 * part / whole)
end

function M.text(t, opts)
  opts = opts_arg(opts, 2, "text")
  local top = opts.top or 10
  local m = model_arg(t, "text")
  local out = {}
  -- (one line each: a control character of a name or a site is shown escaped)
  local function say(fmt, ...)
    local line = select("#", ...) > 0 and fmt:format(...) or fmt
    out[#out + 1] = (line:gsub("%c", function(c)
      return c == "\t" and "\\t" or c == "\n" and "\\n" or ("\\%d"):format(c:byte())
    end))
  end
  local dur = m.t1 - m.t0
  local meta = m.meta
  say("cosock-trace: %s", opts.name or "trace")
  say("  %d events, %d tasks, %s (clock %s%s)", m.nevents, #m.tasks, s(dur), tostring(meta.clock or "?"),
    meta.lua and (", " .. meta.lua) or "")
  if m.dropped > 0 then
    local bar = ("!"):rep(78)
    say(bar)
    say("!!! %d EVENTS DROPPED: the trace buffer (size %s) was full, so the trace stops", m.dropped,
      tostring(meta.size or "?"))
    say("!!! early (after %s events): what follows is incomplete. Trace again with a", tostring(meta.recorded or "?"))
    say("!!! bigger buffer: COSOCK_TRACE_SIZE=n, or trace.start{size = n}.")
    say(bar)
  end

  -- A task alive when the trace ends: what its last span says it was doing.
  local function alive_as(k)
    local last = k.spans[#k.spans]
    if last == nil or last.kind == "run" then return "running" end
    return last.kind == "wait" and "waiting" or "ready"
  end

  local busiest = M.busiest(m, top)
  say("")
  say("Tasks by busy time (%d of %d):", #busiest, #m.tasks)
  if #busiest > 0 then
    say("  %-12s %6s %6s  %-12s %-12s %-9s %s", "busy", "%", "turns", "waiting", "ready", "ended", "task")
    for _, k in ipairs(busiest) do
      say("  %-12s %6s %6d  %-12s %-12s %-9s %s (%s)", s(k.busy), pct(k.busy, dur), k.turns, s(k.waited), s(k.ready),
        k.how or (k.end_t and "?" or alive_as(k)), model_of.label(m, k.id), k.site)
    end
  end

  local waits, nwaits = M.longest_waits(m, top)
  say("")
  say("Longest waits (%d of %d):", #waits, nwaits)
  for _, w in ipairs(waits) do
    say("  %-12s %s on %s%s at %s: %s", s(w.t1 - w.t0), pad(model_of.label(m, w.task), 16), w.what,
      w.detail and (" (" .. w.detail .. ")") or "", s(w.t0 - m.t0), ended_by(m, w.ended_by))
  end

  local chains = M.chains(m, top)
  say("")
  say("Longest chains of wakes (%d):", #chains)
  for _, c in ipairs(chains) do
    local parts = { model_of.label(m, c[1].by) }
    for _, w in ipairs(c) do parts[#parts + 1] = ("-%s-> %s"):format(w.cause, model_of.label(m, w.task)) end
    local last = c[#c]
    say("  %d wake%s, %s to %s: %s", #c, #c == 1 and "" or "s", s(c[1].t - m.t0), s(last.to.t0 - m.t0),
      table.concat(parts, " "))
  end

  local errors = {}
  for _, k in ipairs(m.tasks) do
    if k.how == "raised" then errors[#errors + 1] = k end
  end
  if #errors > 0 then
    say("")
    say("Tasks that raised (%d):", #errors)
    for i = 1, math.min(#errors, top) do
      local k = errors[i]
      say("  %s at %s: %s", model_of.label(m, k.id), s(k.end_t - m.t0), oneline(k.error))
    end
  end
  if #m.notes > 0 then
    say("")
    say("Notes (%d):", #m.notes)
    for i = 1, math.min(#m.notes, top) do
      local e = m.notes[i]
      say("  %s %s %s: %s", s(e.t - m.t0), e.task == 0 and "loop" or model_of.label(m, e.task), e.what or "note",
        oneline(e.detail))
    end
  end
  if m.dropped > 0 then
    say("")
    say("cosock-trace: %d EVENTS DROPPED: this trace is incomplete (see above)", m.dropped)
  end
  return table.concat(out, "\n") .. "\n"
end

return M
