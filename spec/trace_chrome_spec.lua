-- cosock.trace.chrome: the Chrome trace event export of the known trace of
-- spec/support/trace_gen.lua, parsed back with dkjson (Debian lua-dkjson)
-- and checked event by event.
local tfile = require "cosock.trace.file"
local chrome = require "cosock.trace.chrome"
local gen = require "spec.support.trace_gen"
local dkjson = require "dkjson"

local function export(meta)
  local path = os.tmpname()
  gen.small(path, meta)
  local text = chrome.export(tfile.read(path))
  os.remove(path)
  local doc, _, err = dkjson.decode(text)
  assert(doc, err)
  return doc, text
end

local function find(doc, pred)
  local out = {}
  for _, e in ipairs(doc.traceEvents) do
    if pred(e) then out[#out + 1] = e end
  end
  return out
end

describe("cosock.trace.chrome.export", function()
  local doc = export()

  it("names the loop's track and a track per task by thread_name metadata", function()
    local names = {}
    for _, e in ipairs(find(doc, function(e) return e.ph == "M" and e.name == "thread_name" end)) do
      names[e.tid] = e.args.name
    end
    assert.same({ [0] = "loop", [1] = "#1 server", [2] = "#2 client", [3] = "#3 worker" }, names)
  end)

  it("writes each turn as a complete event at its time and length, in microseconds", function()
    local runs = find(doc, function(e) return e.ph == "X" and e.name == "run" end)
    local got = {}
    for _, e in ipairs(runs) do got[#got + 1] = { e.tid, math.floor(e.ts + 0.5), math.floor(e.dur + 0.5) } end
    table.sort(got, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
    assert.same({
      { 1, 10000, 90000 }, { 1, 700000, 100000 },
      { 2, 100000, 200000 }, { 2, 500000, 100000 }, { 2, 900000, 100000 },
      { 3, 300000, 100000 }, { 3, 600000, 100000 },
    }, got)
  end)

  it("names a wait by what it waits on, with the detail and what ended it", function()
    local waits = find(doc, function(e) return e.ph == "X" and e.cat == "wait" end)
    assert.equal(4, #waits)
    local recv = find(doc, function(e) return e.ph == "X" and e.name == "wait recv" end)[1]
    assert.equal(1, recv.tid)
    assert.equal(100000, math.floor(recv.ts + 0.5))
    assert.equal(600000, math.floor(recv.dur + 0.5))
    assert.equal("fd 7", recv.args.detail)
    assert.equal("close", recv.args.cause)
    assert.equal("#3 worker", recv.args.by)
    local sleep = find(doc, function(e) return e.name == "wait sleep" end)[1]
    assert.equal(0.2, sleep.args.timeout)
    assert.equal("timer", sleep.args.cause)
    assert.truthy(find(doc, function(e) return e.name == "wait channel-recv" and e.tid == 3 end)[1])
    assert.truthy(find(doc, function(e) return e.name == "wait send" and e.tid == 2 end)[1])
  end)

  it("draws each wake as a flow from the waker's turn to the woken task's next turn", function()
    local starts, finishes = {}, {}
    for _, e in ipairs(find(doc, function(e) return e.ph == "s" end)) do starts[e.id] = e end
    for _, e in ipairs(find(doc, function(e) return e.ph == "f" end)) do finishes[e.id] = e end
    local flows = {}
    for id, s in pairs(starts) do
      local f = assert(finishes[id], "a flow without its end")
      assert.equal("e", f.bp)
      flows[#flows + 1] = ("%s %d@%d -> %d@%d"):format(s.name, s.tid, math.floor(s.ts + 0.5), f.tid, math.floor(f.ts + 0.5))
    end
    table.sort(flows)
    assert.same({
      "wake close 3@700000 -> 1@700000",   -- the worker's turn closed the server's socket
      "wake ready 0@900000 -> 2@900000",   -- readiness: from the loop
      "wake send 2@600000 -> 3@600000",    -- the client's turn sent to the worker
      "wake spawn 0@0 -> 1@10000",
      "wake spawn 0@0 -> 2@100000",
      "wake spawn 1@100000 -> 3@300000",   -- spawned by the server's turn
      "wake timer 0@500000 -> 2@500000",
    }, flows)
  end)

  it("puts polls and timers on the loop's track", function()
    local polls = find(doc, function(e) return e.name == "poll" end)
    assert.equal(2, #polls)
    assert.equal(0, polls[1].tid)
    assert.equal(400000, math.floor(polls[1].ts + 0.5))
    assert.equal(100000, math.floor(polls[1].dur + 0.5))
    assert.equal(1, polls[2].args.nready)
    local timers = find(doc, function(e) return e.name == "timers" end)
    assert.equal(1, #timers)
    assert.equal(0, timers[1].tid)
    assert.equal(1, timers[1].args.count)
  end)

  it("marks the ends (with the error) and the notes", function()
    local e = find(doc, function(e) return e.name == "end raised" end)[1]
    assert.equal(3, e.tid)
    assert.equal("app.lua:20: boom", e.args.error)
    local n = find(doc, function(e) return e.name == "warn-turn" end)[1]
    assert.equal(3, n.tid)
    assert.equal("a turn of 0.1 s\t(limit 0.05 s)", n.args.detail)
  end)

  it("carries the meta lines and the dropped count in otherData", function()
    assert.equal(0, doc.otherData.dropped)
    assert.equal("virtual", doc.otherData.clock)
    assert.equal(0, #find(doc, function(e) return e.cat == "trace" end))
    local d = export({ dropped = 1234 })
    assert.equal(1234, d.otherData.dropped)
    local g = find(d, function(e) return e.cat == "trace" end)[1]
    assert.equal("g", g.s)
    assert.matches("1234 events dropped", g.name, 1, true)
  end)

  it("writes valid JSON for any bytes of a name or an error, and no </script>", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write("cosock-trace 1\nE\t0\tspawn\t1\t0\tq\"u\\\\o</script>\255\ta.lua:1\nE\t0\tend\t1\traised\t\1\2\226\130\172\n")
    f:close()
    local text = chrome.export(tfile.read(path))
    os.remove(path)
    assert.is_nil(text:find("</script>", 1, true))
    local d = assert(dkjson.decode(text))
    local name = find(d, function(e) return e.name == "thread_name" and e.tid == 1 end)[1].args.name
    assert.equal("#1 q\"u\\o</script>\239\191\189", name)
    assert.equal("\1\2\226\130\172", find(d, function(e) return e.name == "end raised" end)[1].args.error)
  end)
end)
