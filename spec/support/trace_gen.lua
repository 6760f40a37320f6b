-- Writes trace files in the format of doc/tracing.md ("The file format"),
-- written here line by line and not through cosock.trace.file, so that the
-- reader is checked against the format and not against itself.
--   small(path)        the known trace below (three tasks, every span known)
--   big(path, n)       n tasks (default 10000), deterministic
--   lines(events, meta) -> the file's text for a list of events
-- Also a command: lua spec/support/trace_gen.lua small|big PATH [N]

local M = {}

local function esc(v)
  if v == nil or v == "" then return "-" end
  if type(v) == "number" then return (v == math.floor(v) and ("%d"):format(v)) or ("%.9f"):format(v) end
  return (tostring(v):gsub("[\\\t\n\r]", { ["\\"] = "\\\\", ["\t"] = "\\t", ["\n"] = "\\n", ["\r"] = "\\r" }))
end

-- events: { {t, kind, task, field...} } with the fields in file order.
function M.text(events, meta)
  local out = { "cosock-trace 1" }
  local keys = {}
  for k in pairs(meta) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = "M\t" .. k .. "\t" .. esc(meta[k]) end
  for _, e in ipairs(events) do
    local f = { "E", ("%.9f"):format(e[1]), e[2], esc(e[3]) }
    for i = 4, e.n or #e do f[#f + 1] = esc(e[i]) end
    out[#out + 1] = table.concat(f, "\t")
  end
  return table.concat(out, "\n") .. "\n"
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- The known trace: server (1) and client (2) spawned by the main program,
-- worker (3) by the server. The client's turn at 0.5 sends on a channel the
-- worker waits on; the worker's turn at 0.6 closes the socket the server
-- waits on: the chain client -> worker -> server. Busy time: client 0.4,
-- worker 0.2, server 0.19.
M.SMALL = {
  { 0.000, "spawn", 1, 0, "server", "app.lua:10" },
  { 0.000, "spawn", 2, 0, "client", "app.lua:30" },
  { 0.000, "wake", 1, "spawn", 0, nil, n = 6 },
  { 0.000, "wake", 2, "spawn", 0, nil, n = 6 },
  { 0.010, "run", 1 },
  { 0.100, "spawn", 3, 1, "worker", "app.lua:15" },
  { 0.100, "wake", 3, "spawn", 1, nil, n = 6 },
  { 0.100, "wait", 1, "recv", "fd 7", nil, n = 6 },
  { 0.100, "run", 2 },
  { 0.300, "wait", 2, "sleep", nil, 0.2, n = 6 },
  { 0.300, "run", 3 },
  { 0.400, "wait", 3, "channel-recv", "channel 1", nil, n = 6 },
  { 0.400, "poll", 0, 0.1, 0 },
  { 0.500, "timers", 0, 1 },
  { 0.500, "wake", 2, "timer", 0, nil, n = 6 },
  { 0.500, "run", 2 },
  { 0.600, "wake", 3, "send", 2, "channel 1" },
  { 0.600, "wait", 2, "send", "fd 8", 1.5 },
  { 0.600, "run", 3 },
  { 0.650, "note", 3, "warn-turn", "a turn of 0.1 s\t(limit 0.05 s)" },
  { 0.650, "frobnicate", 3, "an unknown kind: ignored" },
  { 0.700, "wake", 1, "close", 3, "fd 7" },
  { 0.700, "end", 3, "raised", "app.lua:20: boom" },
  { 0.700, "run", 1 },
  { 0.800, "end", 1, "returned", nil, n = 5 },
  { 0.800, "poll", 0, 0.1, 1 },
  { 0.900, "wake", 2, "ready", 0, "fd 8 send" },
  { 0.900, "run", 2 },
  { 1.000, "end", 2, "returned", nil, n = 5 },
}

M.SMALL_META = { clock = "virtual", size = 65536, recorded = 28, dropped = 0,
  lua = "Lua 5.3", started = 1700000000, future = "an unknown key: ignored" }

function M.small(path, meta)
  local m = {}
  for k, v in pairs(M.SMALL_META) do m[k] = v end
  for k, v in pairs(meta or {}) do m[k] = v end
  write(path, M.text(M.SMALL, m))
end

-- A small deterministic generator (the same numbers on every Lua).
local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 16807) % 2147483647   -- products stay below 2^53: exact on 5.1 too
    return s % n
  end
end

local WAITS = { "recv", "send", "select", "channel-recv", "channel-send", "sleep", "lock", "join", "yield" }

-- n tasks; task i is spawned at i * 0.001 s by task i - 1 (task 1 by the
-- main program) and runs three turns of 0.2 ms, waiting 2 to 50 ms between
-- them on something; its second wait is ended by the task before it (a
-- send), the others by readiness or a timer. Events are in time order.
function M.big_events(n)
  n = n or 10000
  local rnd = lcg(42)
  local ev = {}
  local function add(e) ev[#ev + 1] = e end
  for i = 1, n do
    local t = i * 0.001
    add({ t, "spawn", i, i - 1, "task-" .. i, "gen.lua:" .. (i % 97 + 1) })
    add({ t, "wake", i, "spawn", i - 1, nil, n = 6 })
    for turn = 1, 3 do
      local run0 = t + 0.0001
      add({ run0, "run", i })
      t = run0 + 0.0002
      if turn == 3 then
        add({ t, "end", i, (i % 50 == 0) and "raised" or "returned", (i % 50 == 0) and ("gen.lua:9: failure " .. i) or nil, n = 5 })
      else
        local what = WAITS[rnd(#WAITS) + 1]
        add({ t, "wait", i, what, "fd " .. (i % 1000 + 3), (what == "sleep") and 0.05 or nil, n = 6 })
        t = t + 0.002 + rnd(48) * 0.001
        if turn == 2 and i > 1 then
          add({ t, "wake", i, "send", i - 1, "channel " .. i })
        else
          add({ t, "wake", i, (what == "sleep") and "timer" or "ready", 0, nil, n = 6 })
        end
      end
    end
  end
  -- The loop's polls, every 5 ms.
  local last = ev[#ev][1]
  local t = 0
  while t < last do
    add({ t, "poll", 0, 0.004, 1 })
    t = t + 0.005
  end
  -- Stable sort by time (the writer records in order).
  for k, e in ipairs(ev) do e.seq = k end
  table.sort(ev, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a.seq < b.seq
  end)
  return ev
end

function M.big(path, n)
  local ev = M.big_events(n)
  write(path, M.text(ev, { clock = "virtual", size = #ev, recorded = #ev, dropped = 0, lua = _VERSION, started = 1700000000 }))
  return #ev
end

if arg and arg[0] and arg[0]:match("trace_gen%.lua$") and ... ~= "spec.support.trace_gen" then
  local what, path, n = ...
  if what == "small" then M.small(path)
  elseif what == "big" then M.big(path, tonumber(n))
  else
    io.stderr:write("usage: lua spec/support/trace_gen.lua small|big PATH [N]\n")
    os.exit(2)
  end
end

return M
