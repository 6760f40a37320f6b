-- examples/trace_view.lua: your own look at a saved trace, with the readers
-- cosock-trace is made of (doc/tracing.md, "Your own analysis"): for each
-- kind of wait, how many waits, their total and longest time, and what
-- ended them; then the longest time a woken task waited for its turn.
--   lua5.3 examples/trace_view.lua [FILE]
-- FILE: a trace saved by cosock.trace.save or COSOCK_TRACE=FILE; without
-- it, the small trace below (a server, a client and a worker).
local tfile = require "cosock.trace.file"
local model = require "cosock.trace.model"

local SAMPLE = table.concat({
  "cosock-trace 1",
  "M\tclock\tvirtual",
  "E\t0.000\tspawn\t1\t0\tserver\tapp.lua:10",
  "E\t0.000\tspawn\t2\t0\tclient\tapp.lua:30",
  "E\t0.000\twake\t1\tspawn\t0\t-",
  "E\t0.000\twake\t2\tspawn\t0\t-",
  "E\t0.010\trun\t1",
  "E\t0.100\tspawn\t3\t1\tworker\tapp.lua:15",
  "E\t0.100\twake\t3\tspawn\t1\t-",
  "E\t0.100\twait\t1\trecv\tfd 7\t-",
  "E\t0.100\trun\t2",
  "E\t0.300\twait\t2\tsleep\t-\t0.2",
  "E\t0.300\trun\t3",
  "E\t0.400\twait\t3\tchannel-recv\tchannel 1\t-",
  "E\t0.500\twake\t2\ttimer\t0\t-",
  "E\t0.500\trun\t2",
  "E\t0.600\twake\t3\tsend\t2\tchannel 1",
  "E\t0.600\twait\t2\tsend\tfd 8\t1.5",
  "E\t0.600\trun\t3",
  "E\t0.700\twake\t1\tclose\t3\tfd 7",
  "E\t0.700\tend\t3\traised\tapp.lua:20: boom",
  "E\t0.700\trun\t1",
  "E\t0.800\tend\t1\treturned\t-",
  "E\t0.900\twake\t2\tready\t0\tfd 8 send",
  "E\t0.900\trun\t2",
  "E\t1.000\tend\t2\treturned\t-",
}, "\n")

local path = ...
local m = model.build(path and tfile.read(path) or tfile.parse(SAMPLE, "sample"))

-- Waits by what they waited on.
local kinds, order = {}, {}
for _, task in ipairs(m.tasks) do
  for _, span in ipairs(task.spans) do
    if span.kind == "wait" then
      local k = kinds[span.what]
      if not k then
        k = { n = 0, total = 0, max = 0, causes = {} }
        kinds[span.what] = k
        order[#order + 1] = span.what
      end
      local d = span.t1 - span.t0
      k.n, k.total, k.max = k.n + 1, k.total + d, math.max(k.max, d)
      local cause = span.ended_by and span.ended_by.cause or "(still waiting)"
      k.causes[cause] = (k.causes[cause] or 0) + 1
    end
  end
end
table.sort(order, function(a, b)
  if kinds[a].total ~= kinds[b].total then return kinds[a].total > kinds[b].total end
  return a < b
end)
print(("%d tasks, %.3f s"):format(#m.tasks, m.t1 - m.t0))
print(("%-14s %5s %10s %10s  %s"):format("wait", "count", "total", "longest", "ended by"))
for _, what in ipairs(order) do
  local k, causes = kinds[what], {}
  for cause, n in pairs(k.causes) do causes[#causes + 1] = cause .. " " .. n end
  table.sort(causes)
  print(("%-14s %5d %8.3f s %8.3f s  %s"):format(what, k.n, k.total, k.max, table.concat(causes, ", ")))
end

-- The longest delay between a wake and the turn it led to.
local worst
for _, w in ipairs(m.wakes) do
  if w.to and (not worst or w.to.t0 - w.t > worst.to.t0 - worst.t) then worst = w end
end
if worst then
  print(("longest wait for a turn: %s, %.3f s (woken by %s at %.3f s)"):format(
    model.label(m, worst.task), worst.to.t0 - worst.t, worst.cause, worst.t - m.t0))
end
