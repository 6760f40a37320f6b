-- cosock.trace.model: the spans, wakes and chains built from a trace's
-- events, and cosock.trace.html.data, the page's arrays built from them.
local tfile = require "cosock.trace.file"
local model = require "cosock.trace.model"
local html = require "cosock.trace.html"
local gen = require "spec.support.trace_gen"
local dkjson = require "dkjson"

local function small()
  local path = os.tmpname()
  gen.small(path)
  local tr = tfile.read(path)
  os.remove(path)
  return tr
end

local function kinds(task)
  local out = {}
  for _, s in ipairs(task.spans) do
    out[#out + 1] = ("%s %.2f-%.2f"):format(s.kind == "wait" and s.what or s.kind, s.t0, s.t1)
  end
  return out
end

describe("cosock.trace.model.build", function()
  it("gives each task its turns, waits and ready times, end to end", function()
    local m = model.build(small())
    assert.equal(3, #m.tasks)
    assert.same({ "ready 0.00-0.01", "run 0.01-0.10", "recv 0.10-0.70", "ready 0.70-0.70", "run 0.70-0.80" },
      kinds(m.by_id[1]))
    assert.same({ "ready 0.00-0.10", "run 0.10-0.30", "sleep 0.30-0.50", "ready 0.50-0.50", "run 0.50-0.60",
      "send 0.60-0.90", "ready 0.90-0.90", "run 0.90-1.00" }, kinds(m.by_id[2]))
    local w = m.by_id[3]
    assert.same({ "worker", "app.lua:15", 1, 0.1, 0.7, "raised", "app.lua:20: boom", 2 },
      { w.name, w.site, w.parent, w.spawn_t, w.end_t, w.how, w.error, w.turns })
    assert.equal(0, m.t0)
    assert.equal(1, m.t1)
  end)

  it("links each wake to the waker's turn and the woken task's next turn; depth counts the chain", function()
    local m = model.build(small())
    local close
    for _, w in ipairs(m.wakes) do
      if w.cause == "close" then close = w end
    end
    assert.equal(3, close.by)
    assert.equal(m.by_id[3].spans[5], close.from)      -- the worker's turn at 0.6
    assert.equal(m.by_id[1].spans[5], close.to)        -- the server's turn at 0.7
    assert.equal(close, m.by_id[1].spans[3].ended_by)  -- it ended the recv
    assert.equal(2, close.to.depth)                    -- client -> worker -> server
    assert.is_nil(m.by_id[2].spans[3].ended_by.from)   -- a timer: no turn
  end)

  it("names a task seen before its spawn event 'task N', and closes what is open at the trace's end", function()
    local m = model.build(tfile.parse(table.concat({
      "cosock-trace 1",
      "E\t1\trun\t5",
      "E\t2\twait\t5\tlock\t-\t-",
      "E\t2\tspawn\t6\t5\tlate\t-",
      "E\t3\trun\t6",
    }, "\n")))
    local t5, t6 = m.by_id[5], m.by_id[6]
    assert.equal("task 5", t5.name)
    assert.equal("?", t5.site)
    assert.same({ "run 1.00-2.00", "lock 2.00-3.00" }, kinds(t5))
    assert.is_true(t5.spans[2].open)
    assert.is_nil(t5.spans[2].ended_by)
    assert.equal("late", t6.name)
    assert.is_true(t6.spans[1].open)
    assert.equal("#6 late", model.label(m, 6))
    assert.equal("main", model.label(m, 0))
  end)

  it("keeps a wake that comes during the task's own turn, without a span", function()
    local m = model.build(tfile.parse(table.concat({
      "cosock-trace 1",
      "E\t0\trun\t1",
      "E\t0.5\twake\t1\tsignal\t1\t-",
      "E\t1\twait\t1\tyield\t-\t-",
      "E\t1\trun\t1",
      "E\t2\tend\t1\tcancelled\t-",
    }, "\n")))
    assert.same({ "run 0.00-1.00", "yield 1.00-1.00", "run 1.00-2.00" }, kinds(m.by_id[1]))
    assert.equal(1, #m.wakes)
    assert.equal(m.by_id[1].spans[3], m.wakes[1].to)
    assert.equal("cancelled", m.by_id[1].how)
  end)

  it("gives a turn the wake that ended its wait, not one that came during the turn before", function()
    local m = model.build(tfile.parse(table.concat({
      "cosock-trace 1",
      "E\t0\trun\t1",
      "E\t0.5\twake\t1\tsignal\t1\t-",
      "E\t2\twait\t1\trecv\tfd 3\t-",
      "E\t3\twake\t1\tready\t0\tfd 3 recv",
      "E\t3\trun\t1",
    }, "\n")))
    local last = m.by_id[1].spans[#m.by_id[1].spans]
    assert.equal("ready", last.woken_by.cause)
    assert.equal(0, last.depth)
  end)

  it("counts the dropped events from the meta line", function()
    local tr = small()
    tr.meta.dropped = 9
    assert.equal(9, model.build(tr).dropped)
    assert.equal(0, model.build({ events = {} }).dropped)
  end)

  it("raises on what is not a trace", function()
    assert.has_error(function() model.build(42) end,
      "bad argument #1 to 'build' (a trace {meta =, events =} expected)")
  end)
end)

describe("cosock.trace.html.data", function()
  it("holds each task's spans as [start, length, code, detail, wake] in nanoseconds", function()
    local d = assert(dkjson.decode(html.data(small())))
    assert.same({ 1, 2, 3 }, d.ids)
    assert.same({ "server", "client", "worker" }, d.names)
    assert.equal(1000000000, d.dur)
    local recv = 2 + 0                      -- codes: 0 run, 1 ready, 2.. the waits (recv first)
    local s = d.spans[1]
    assert.same({ 10000000, 90000000, 0 }, { s[6], s[7], s[8] })       -- run 0.01-0.1
    assert.same({ 100000000, 600000000, recv }, { s[11], s[12], s[13] }) -- recv 0.1-0.7
    assert.equal("fd 7", d.strs[s[14] + 1])
    local w = s[15] * 7                     -- the wake that ended it: [t, from row, to row, to t, cause, detail, by]
    assert.same({ 700000000, 2, 0, 700000000 }, { d.wakes[w + 1], d.wakes[w + 2], d.wakes[w + 3], d.wakes[w + 4] })
    assert.equal("close", d.strs[d.wakes[w + 5] + 1])
    assert.equal(3, d.wakes[w + 7])
    assert.same({ 800000000, 1000000000, 700000000 }, d.ends)
    assert.equal("raised", d.strs[d.hows[3] + 1])
    assert.same({ 400000000, 100000000, 0, 800000000, 100000000, 1 }, d.polls)
    assert.same({ 500000000, 1 }, d.timers)
  end)

  it("makes a page that fetches nothing and keeps </script> out of its data", function()
    local tr = small()
    tr.events[1].name = "</script><script>alert(1)</script>"
    local page = html.render(tr, { title = "a<b" })
    assert.matches("<title>cosock trace: a&lt;b</title>", page, 1, true)
    local n = 0
    for _ in page:gmatch("</script>") do n = n + 1 end
    assert.equal(2, n)   -- the data's and the script's own
    assert.is_nil(page:find("https?://"))
  end)
end)
