-- The recording (cosock.trace) and the viewer (cosock.trace.file, .model,
-- .summary, cosock-trace) on real runs: what save writes, the reader reads
-- back event for event, and the viewer's wake links and chains follow what
-- the loop recorded (the viewer's own specs use generated traces).
local cosock = require "cosock"
local trace = require "cosock.trace"
local file = require "cosock.trace.file"
local model = require "cosock.trace.model"
local summary = require "cosock.trace.summary"
local cli = require "cosock.trace.cli"
local net = require "spec.support.net"

local function saved(path)
  trace.stop()
  assert(trace.save(path))
  return file.read(path)
end

-- The event a predicate picks, or nil.
local function find(events, pred)
  for _, e in ipairs(events) do
    if pred(e) then return e end
  end
end

local function id_of(events, name)
  local e = find(events, function(e) return e.kind == "spawn" and e.name == name end)
  return e and e.task
end

describe("a recorded trace, read back and viewed", function()
  local path
  before_each(function()
    cosock.reset()
    path = os.tmpname()
  end)
  after_each(function()
    trace.stop()
    os.remove(path)
    os.remove(path .. ".html")
    cosock.reset()
  end)

  it("a loopback exchange: the file holds what events() holds, and the server's wake is the client's data", function()
    local srv, port = net.listen()
    trace.start({ size = 4096 })
    cosock.spawn(function()
      local c = assert(srv:accept())
      local line = c:receive()
      c:send(line .. "!\n")
      c:close()
      srv:close()
    end, "server")
    cosock.spawn(function()
      local c = assert(cosock.socket.connect("127.0.0.1", port))
      c:send("ping\n")
      assert.equal("ping!", c:receive())
      c:close()
    end, "client")
    cosock.run()
    local live = trace.events()
    local read = saved(path)
    assert.equal(#live, #read.events)
    for i, e in ipairs(live) do
      local r = read.events[i]
      assert.equal(e.kind, r.kind)
      assert.equal(e.task, r.task)
      for _, k in ipairs({ "name", "site", "what", "detail", "cause", "by", "how", "error", "parent" }) do
        assert.equal(e[k], r[k], ("event %d (%s), field %s"):format(i, e.kind, k))
      end
      assert.is_true(math.abs(e.t - r.t) < 1e-8)
    end
    assert.equal(0, tonumber(read.meta.dropped))

    local server = id_of(read.events, "server")
    -- the server waited to receive on its connection, and readiness of that fd ended it
    local wait = find(read.events, function(e)
      return e.kind == "wait" and e.task == server and e.what == "recv"
    end)
    assert.truthy(wait, "the server's receive wait")
    local m = model.build(read)
    local waits = {}
    for _, sp in ipairs(m.by_id[server].spans) do
      if sp.kind == "wait" and sp.what == "recv" then waits[#waits + 1] = sp end
    end
    assert.is_true(#waits >= 1)
    local woke = waits[#waits].ended_by or waits[#waits].wake
    assert.truthy(woke, "the model links the server's receive wait to its wake")
    assert.equal("ready", woke.cause)
    assert.equal(0, woke.by)
    assert.truthy(tostring(woke.detail):match("^fd %d+ recv$"), woke.detail)
  end)

  it("a hand-off over two channels makes a chain of two wakes, first to last, in the summary", function()
    trace.start({ size = 4096 })
    local tx1, rx1 = cosock.channel.new()
    local tx2, rx2 = cosock.channel.new()
    cosock.spawn(function() assert.equal("job", rx2:receive()) end, "last")
    cosock.spawn(function() tx2:send(rx1:receive()) end, "middle")
    cosock.spawn(function() cosock.socket.sleep(0); tx1:send("job") end, "first")
    cosock.run()
    local read = saved(path)
    local m = model.build(read)
    local chains = summary.chains(m, 1)
    assert.equal(2, #chains[1])
    local names = {}
    for _, w in ipairs(chains[1]) do
      assert.equal("send", w.cause)
      names[#names + 1] = m.by_id[w.by].name .. ">" .. m.by_id[w.task].name
    end
    assert.same({ "first>middle", "middle>last" }, names)
  end)

  it("a scope's cancel: the cancelled task's wake is a cancel, its end cancelled; cosock-trace writes the page", function()
    trace.start({ size = 4096 })
    local scope = require "cosock.scope"
    net.run_virtual(function()
      cosock.spawn(function()
        scope.run(function(s)
          s:spawn(function() cosock.socket.sleep(60) end, "sleeper")
          cosock.socket.sleep(1)
          s:cancel()
        end)
      end, "parent")
    end)
    local read = saved(path)
    local sleeper = id_of(read.events, "sleeper")
    local wake = find(read.events, function(e) return e.kind == "wake" and e.task == sleeper and e.cause ~= "spawn" end)
    assert.equal("cancel", wake.cause)
    assert.are_not.equal(0, wake.by)
    local fin = find(read.events, function(e) return e.kind == "end" and e.task == sleeper end)
    assert.equal("cancelled", fin.how)
    local out = {}
    local status = cli.main({ path }, function(s) out[#out + 1] = s end, function() end)
    assert.equal(0, status)
    local text = table.concat(out)
    assert.truthy(text:find("sleeper", 1, true))
    local f = assert(io.open(path .. ".html"))
    local page = f:read("*a")
    f:close()
    assert.truthy(page:find("sleeper", 1, true))
  end)

  it("a warning of cosock.tasks is a note on the warned task's id, even when it is reported after the task ended", function()
    local tasks = require "cosock.tasks"
    trace.start({ size = 4096 })
    tasks.warnings({ turn = 0.005, report = function() end })
    cosock.spawn(function()
      local t = os.clock()
      while os.clock() - t < 0.02 do end         -- 20 ms of CPU: at least as long on the wall
    end, "busy")
    local ok, err = pcall(cosock.run)
    tasks.warnings(false)
    assert(ok, err)
    local read = saved(path)
    local note = find(read.events, function(e) return e.kind == "note" end)
    assert.equal("warn-turn", note.what)
    assert.equal(id_of(read.events, "busy"), note.task)
    assert.truthy(note.detail:find("'busy'", 1, true))
  end)

  it("trace.task_id knows a task while the trace records, and nothing once it stopped", function()
    local during, after
    trace.start({ size = 64 })
    cosock.spawn(function()
      during = trace.task_id()
      trace.stop()
      after = trace.task_id()
    end, "asker")
    cosock.run()
    assert.equal(1, during)
    assert.is_nil(after)
  end)
end)
