-- cosock.trace.file: reading the trace file format (doc/tracing.md, "The
-- file format"), on traces written by spec/support/trace_gen.lua.
local tfile = require "cosock.trace.file"
local gen = require "spec.support.trace_gen"

local function tmpfile(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

local function read_text(text)
  local path = tmpfile(text)
  local ok, res = pcall(tfile.read, path)
  os.remove(path)
  return ok, res, path
end

describe("cosock.trace.file.read", function()
  it("reads the meta lines and every event of a known kind, in order, with their fields", function()
    local path = os.tmpname()
    gen.small(path)
    local tr = tfile.read(path)
    os.remove(path)
    assert.same({ clock = "virtual", size = 65536, recorded = 28, dropped = 0, lua = "Lua 5.3",
      started = 1700000000, future = "an unknown key: ignored" }, tr.meta)
    -- 29 lines of events, one of an unknown kind left out.
    assert.equal(#gen.SMALL - 1, #tr.events)
    assert.same({ t = 0, kind = "spawn", task = 1, parent = 0, name = "server", site = "app.lua:10" }, tr.events[1])
    assert.same({ t = 0, kind = "wake", task = 1, cause = "spawn", by = 0 }, tr.events[3])
    assert.same({ t = 0.01, kind = "run", task = 1 }, tr.events[5])
    assert.same({ t = 0.1, kind = "wait", task = 1, what = "recv", detail = "fd 7" }, tr.events[8])
    assert.same({ t = 0.3, kind = "wait", task = 2, what = "sleep", timeout = 0.2 }, tr.events[10])
    assert.same({ t = 0.4, kind = "poll", task = 0, slept = 0.1, nready = 0 }, tr.events[13])
    assert.same({ t = 0.5, kind = "timers", task = 0, count = 1 }, tr.events[14])
    assert.same({ t = 0.6, kind = "wake", task = 3, cause = "send", by = 2, detail = "channel 1" }, tr.events[17])
    -- An escaped TAB comes back as a TAB.
    assert.same({ t = 0.65, kind = "note", task = 3, what = "warn-turn", detail = "a turn of 0.1 s\t(limit 0.05 s)" },
      tr.events[20])
    assert.same({ t = 0.7, kind = "end", task = 3, how = "raised", error = "app.lua:20: boom" }, tr.events[22])
    assert.same({ t = 0.8, kind = "end", task = 1, how = "returned" }, tr.events[24])
  end)

  it("unescapes \\t \\n \\r \\\\ and reads - as nil, with CR LF line ends too", function()
    local ok, tr = read_text("cosock-trace 1\r\nM\tclock\treal\r\n" ..
      "E\t1.5\tend\t4\traised\ta\\nb\\tc\\rd\\\\e\r\n" ..
      "E\t2\twait\t4\tother\t-\t-\r\n")
    assert.is_true(ok, tr)
    assert.equal("real", tr.meta.clock)
    assert.equal("a\nb\tc\rd\\e", tr.events[1].error)
    assert.is_nil(tr.events[2].detail)
    assert.is_nil(tr.events[2].timeout)
  end)

  it("keeps extra trailing fields of a known kind out (a newer writer may add some)", function()
    local ok, tr = read_text("cosock-trace 1\nE\t0\trun\t1\textra\n")
    assert.is_true(ok, tr)
    assert.same({ t = 0, kind = "run", task = 1 }, tr.events[1])
  end)

  it("reads a 1,000-task trace (scripts/check-trace-html.sh reads 10,000)", function()
    local path = os.tmpname()
    local n = gen.big(path, 1000)
    local tr = tfile.read(path)
    os.remove(path)
    assert.equal(n, #tr.events)
    local spawns = 0
    for _, e in ipairs(tr.events) do
      if e.kind == "spawn" then spawns = spawns + 1 end
    end
    assert.equal(1000, spawns)
  end)

  describe("raises naming the file and the line", function()
    local cases = {
      { "not a trace", "hello\n", ":1: not a cosock trace" },
      { "empty file", "", ":1: empty file: not a cosock trace" },
      { "another version", "cosock-trace 2\n", ":1: trace format version 2: this reader knows version 1" },
      { "bad time", "cosock-trace 1\nE\tsoon\trun\t1\n", ":2: bad time \"soon\"" },
      { "bad task", "cosock-trace 1\nM\tclock\treal\nE\t0\trun\tx\n", ":3: bad task id \"x\" in a run event" },
      { "missing fields", "cosock-trace 1\nE\t0\twait\t1\trecv\n", ":2: a wait event has 1 fields after the task, not 3" },
      { "bad number field", "cosock-trace 1\nE\t0\twake\t1\tsend\tme\t-\n", ":2: bad by \"me\" in a wake event" },
      { "short line", "cosock-trace 1\nE\t0\trun\n", ":2: an event line needs at least E, time, kind and task" },
      { "unknown record", "cosock-trace 1\nX\t0\n", ":2: a line starts with M or E, not \"X\"" },
      { "bad escape", "cosock-trace 1\nE\t0\tend\t1\traised\tbad\\q\n", ":2: bad escape '\\q'" },
      { "bad meta number", "cosock-trace 1\nM\tdropped\tmany\n", ":2: meta dropped: bad number \"many\"" },
      { "a task id not whole", "cosock-trace 1\nE\t0\trun\t1.5\n", ":2: bad task id \"1.5\" in a run event" },
      { "a count not whole", "cosock-trace 1\nE\t0\ttimers\t0\t-1\n", ":2: bad count \"-1\" in a timers event" },
      { "a negative meta count", "cosock-trace 1\nM\tsize\t-5\n", ":2: meta size: bad number \"-5\"" },
    }
    for _, c in ipairs(cases) do
      it(c[1], function()
        local ok, err, path = read_text(c[2])
        assert.is_false(ok)
        assert.equal(path .. c[3], err:sub(1, #path + #c[3]))
      end)
    end
    it("a file that cannot be opened", function()
      local ok, err = pcall(tfile.read, "/nonexistent/x.trace")
      assert.is_false(ok)
      assert.matches("cannot open /nonexistent/x.trace", err, 1, true)
    end)
    it("a path that is not a string", function()
      assert.has_error(function() tfile.read(42) end, "bad argument #1 to 'read' (string expected, got number)")
    end)
  end)

  it("parse reads a string, naming it in errors", function()
    local tr = tfile.parse("cosock-trace 1\nE\t0\trun\t1")
    assert.same({ t = 0, kind = "run", task = 1 }, tr.events[1])
    local ok, err = pcall(tfile.parse, "cosock-trace 1\nE\tx\trun\t1\n", "mine")
    assert.is_false(ok)
    assert.equal("mine:2: bad time \"x\"", err)
  end)
end)
