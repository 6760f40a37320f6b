-- cosock.trace.html: a trace as one self-contained HTML page (inline CSS
-- and script, the data inline, nothing fetched): a timeline drawn on a
-- canvas, one row per task, only the rows and spans in view, so that it
-- stays usable at 10,000 tasks. The page's script and style are in
-- cosock/trace/html_page.lua; this file turns the model into the compact
-- arrays the script reads (times in integer nanoseconds since the trace's
-- start). The layout rule (doc/tracing.md, "The layout") is what
-- scripts/check-trace-html.sh checks pixels against.
--   render(trace_or_model [, opts]) -> HTML text; opts.title
--   write(trace_or_model, path [, opts])

local json = require "cosock.trace.json"
local model_of = require "cosock.trace.model"

local model_arg, opts_arg = model_of.arg, model_of.opts_arg

local page = require "cosock.trace.html_page"

local M = {}

-- The wait kinds of the contract, in the legend's order (a kind not listed,
-- from a newer writer, is added after them).
M.WAITS = { "recv", "send", "select", "channel-recv", "channel-send", "sleep", "timer", "lock",
  "scope", "lookup", "predicate", "signal", "ossignal", "join", "yield", "other" }

local floor = math.floor

-- (%.0f, not %d: a time far from the start, 1e300 s in a hand-written trace
-- or a long sleep under cosock.sim, has no integer representation in ns)
local function numbers(list)
  local out = {}
  for i = 1, #list do out[i] = ("%.0f"):format(list[i]) end
  return "[" .. table.concat(out, ",") .. "]"
end

function M.data(t)
  local m = model_arg(t, "data")
  local t0 = m.t0
  local function ns(x) return floor((x - t0) * 1e9 + 0.5) end
  local strs, str_index = {}, {}
  local function str(s)
    if s == nil then return -1 end
    local i = str_index[s]
    if not i then
      strs[#strs + 1] = s
      i = #strs - 1
      str_index[s] = i
    end
    return i
  end
  local whats, what_code = {}, {}
  local function code_of(what)
    local c = what_code[what]
    if not c then
      whats[#whats + 1] = what
      c = #whats + 1 -- 0 run, 1 ready, 2.. the waits
      what_code[what] = c
    end
    return c
  end
  for _, w in ipairs(M.WAITS) do code_of(w) end

  local row_of = {}
  for i, k in ipairs(m.tasks) do row_of[k.id] = i - 1 end
  local wake_index = {}
  local wakes = {}
  for i, w in ipairs(m.wakes) do
    wake_index[w] = i - 1
    local from = (w.by ~= 0 and row_of[w.by]) or -1
    local n = #wakes
    wakes[n + 1], wakes[n + 2], wakes[n + 3] = ns(w.t), from, row_of[w.task]
    wakes[n + 4], wakes[n + 5], wakes[n + 6] = w.to and ns(w.to.t0) or -1, str(w.cause), str(w.detail)
    wakes[n + 7] = w.by
  end

  local ids, names, sites, parents, spawn, ends, hows, errs = {}, {}, {}, {}, {}, {}, {}, {}
  local busy, waited, turns, spans = {}, {}, {}, {}
  for i, k in ipairs(m.tasks) do
    ids[i], names[i], sites[i], parents[i] = k.id, k.name, k.site, k.parent
    spawn[i], ends[i] = ns(k.spawn_t), k.end_t and ns(k.end_t) or -1
    hows[i], errs[i] = str(k.how), str(k.error)
    busy[i], waited[i], turns[i] = floor(k.busy * 1e9 + 0.5), floor(k.waited * 1e9 + 0.5), k.turns
    local flat = {}
    for _, s in ipairs(k.spans) do
      local n = #flat
      local a = ns(s.t0)
      flat[n + 1], flat[n + 2] = a, ns(s.t1) - a
      flat[n + 3] = s.kind == "run" and 0 or s.kind == "ready" and 1 or code_of(s.what)
      flat[n + 4] = s.kind == "wait" and str(s.detail) or -1
      local w = s.ended_by or s.wake or s.woken_by
      flat[n + 5] = w and wake_index[w] or -1
    end
    spans[i] = numbers(flat)
  end
  local polls, timers, notes = {}, {}, {}
  for _, p in ipairs(m.polls) do
    local n = #polls
    polls[n + 1], polls[n + 2], polls[n + 3] = ns(p.t), floor((p.slept or 0) * 1e9 + 0.5), p.nready or 0
  end
  for _, p in ipairs(m.timers) do
    timers[#timers + 1], timers[#timers + 2] = ns(p.t), p.count or 0
  end
  for _, e in ipairs(m.notes) do
    local n = #notes
    notes[n + 1], notes[n + 2] = ns(e.t), (e.task ~= 0 and row_of[e.task]) or -1
    notes[n + 3], notes[n + 4] = str(e.what or "note"), str(e.detail)
  end
  local meta = {}
  for k, v in pairs(m.meta) do meta[k] = v end
  -- Written by hand: the big arrays as plain numbers, the rest encoded.
  local parts = {
    '"version":1',
    '"dur":' .. ("%.0f"):format(ns(m.t1)),
    '"dropped":' .. ("%.0f"):format(m.dropped),
    '"events":' .. ("%.0f"):format(m.nevents),
    '"meta":' .. json.encode(meta),
    '"whats":' .. json.encode(whats),
    '"ids":' .. numbers(ids),
    '"names":' .. json.encode(names),
    '"sites":' .. json.encode(sites),
    '"parents":' .. numbers(parents),
    '"spawn":' .. numbers(spawn),
    '"ends":' .. numbers(ends),
    '"hows":' .. numbers(hows),
    '"errs":' .. numbers(errs),
    '"busy":' .. numbers(busy),
    '"waited":' .. numbers(waited),
    '"turns":' .. numbers(turns),
    '"spans":[' .. table.concat(spans, ",\n") .. "]",
    '"wakes":' .. numbers(wakes),
    '"polls":' .. numbers(polls),
    '"timers":' .. numbers(timers),
    '"notes":' .. numbers(notes),
    '"strs":' .. json.encode(strs),
  }
  return "{" .. table.concat(parts, ",\n") .. "}"
end

local function html_escape(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

function M.render(t, opts)
  t = model_arg(t, "render")
  opts = opts_arg(opts, 2, "render")
  local title = "cosock trace" .. (opts.title and (": " .. opts.title) or "")
  return page.html(html_escape(title), M.data(t))
end

function M.write(t, path, opts)
  t = model_arg(t, "write")
  if type(path) ~= "string" then error("bad argument #2 to 'write' (string expected, got " .. type(path) .. ")", 2) end
  if path:find("\0", 1, true) then error("bad argument #2 to 'write' (path without a NUL expected)", 2) end
  opts = opts_arg(opts, 3, "write")
  local text = M.render(t, opts)
  local f, err = io.open(path, "wb")
  if not f then error("cosock-trace: cannot write " .. tostring(err), 0) end
  f:write(text)
  f:close()
end

return M
