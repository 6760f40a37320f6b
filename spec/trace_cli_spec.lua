-- cosock-trace (cosock.trace.cli, bin/cosock-trace): the summary of the
-- known trace of spec/support/trace_gen.lua, the files it writes, and its
-- errors on bad input and bad arguments.
local cli = require "cosock.trace.cli"
local gen = require "spec.support.trace_gen"
local interpreter = require "spec.support.interpreter"
local child = require "spec.support.child"

local function run(args)
  local out, err = {}, {}
  local status = cli.main(args, function(s) out[#out + 1] = s end, function(s) err[#err + 1] = s end)
  return status, table.concat(out), table.concat(err)
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function lines_of(text)
  local t = {}
  for l in text:gmatch("[^\n]+") do t[#t + 1] = (l:gsub("%s+", " "):gsub("^ ", "")) end
  return t
end

-- The lines after the heading that starts with `heading`, up to a blank line.
local function section(text, heading)
  local out, inside = {}, false
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    if inside then
      if l == "" then break end
      out[#out + 1] = (l:gsub("%s+", " "):gsub("^ ", ""))
    elseif l:sub(1, #heading) == heading then
      inside = true
      out[#out + 1] = l
    end
  end
  return out
end

describe("cosock-trace", function()
  local path, html
  before_each(function()
    path = os.tmpname()
    html = path .. ".html"
    gen.small(path)
  end)
  after_each(function()
    os.remove(path)
    os.remove(html)
  end)

  it("lists the tasks by busy time, with turns, waiting, ready time and how each ended", function()
    local status, out = run({ path })
    assert.equal(0, status)
    assert.same({
      "Tasks by busy time (3 of 3):",
      "busy % turns waiting ready ended task",
      "0.400000 s 40.0% 3 0.500000 s 0.100000 s returned #2 client (app.lua:30)",
      "0.200000 s 20.0% 2 0.200000 s 0.200000 s raised #3 worker (app.lua:15)",
      "0.190000 s 19.0% 2 0.600000 s 0.010000 s returned #1 server (app.lua:10)",
    }, section(out, "Tasks by busy time"))
  end)

  it("lists the longest waits with the cause that ended each and the task that caused it", function()
    local _, out = run({ path, "--top", "3" })
    assert.same({
      "Longest waits (3 of 4):",
      "0.600000 s #1 server on recv (fd 7) at 0.100000 s: ended by close from #3 worker (fd 7)",
      "0.300000 s #2 client on send (fd 8) at 0.600000 s: ended by ready from the loop (fd 8 send)",
      "0.200000 s #2 client on sleep at 0.300000 s: ended by timer from the loop",
    }, section(out, "Longest waits"))
  end)

  it("lists the longest chains of wakes, longest first", function()
    local _, out = run({ path })
    assert.same({
      "Longest chains of wakes (2):",
      "2 wakes, 0.600000 s to 0.700000 s: #2 client -send-> #3 worker -close-> #1 server",
      "1 wake, 0.100000 s to 0.300000 s: #1 server -spawn-> #3 worker",
    }, section(out, "Longest chains"))
  end)

  it("lists the tasks that raised and the notes, each on one line", function()
    local _, out = run({ path })
    assert.same({ "Tasks that raised (1):", "#3 worker at 0.700000 s: app.lua:20: boom" },
      section(out, "Tasks that raised"))
    assert.same({ "Notes (1):", "0.650000 s #3 worker warn-turn: a turn of 0.1 s (limit 0.05 s)" },
      section(out, "Notes"))
  end)

  it("says nothing of dropped events when none were, and loudly when some were", function()
    local _, out = run({ path, "--no-html" })
    assert.is_nil(out:find("DROPPED", 1, true))
    gen.small(path, { dropped = 777, size = 16, recorded = 16 })
    local status, out2 = run({ path, "--no-html" })
    assert.equal(0, status)
    local l = lines_of(out2)
    assert.equal(("!"):rep(78), l[3])
    assert.equal("!!! 777 EVENTS DROPPED: the trace buffer (size 16) was full, so the trace stops", l[4])
    assert.matches("cosock-trace: 777 EVENTS DROPPED: this trace is incomplete", l[#l], 1, true)
  end)

  it("writes the timeline to FILE.html by default, -o elsewhere, and the Chrome export when asked", function()
    local status, out = run({ path })
    assert.equal(0, status)
    assert.is_true(exists(html))
    assert.matches("timeline: " .. html, out, 1, true)
    local f = assert(io.open(html, "rb"))
    local text = f:read("*a")
    f:close()
    assert.matches("^<!DOCTYPE html>", text)
    assert.matches('"names":["server","client","worker"]', text, 1, true)
    -- Self-contained: nothing is fetched.
    assert.is_nil(text:find("https?://"))
    assert.is_nil(text:find("<link", 1, true))
    assert.is_nil(text:find("src=", 1, true))
    local other, json = path .. ".other.html", path .. ".json"
    status, out = run({ "--chrome", json, path, "-o", other })
    assert.equal(0, status)
    assert.is_true(exists(other))
    assert.is_true(exists(json))
    assert.matches("chrome trace: " .. json, out, 1, true)
    os.remove(other)
    os.remove(json)
    os.remove(html)
    status = run({ path, "--no-html" })
    assert.equal(0, status)
    assert.is_false(exists(html))
  end)

  describe("fails with a clear message", function()
    it("on a file that is not a trace, naming the file and the line", function()
      local f = assert(io.open(path, "wb"))
      f:write("cosock-trace 1\nE\t0\tspawn\t1\n")
      f:close()
      local status, out, err = run({ path })
      assert.equal(1, status)
      assert.equal("", out)
      assert.equal("cosock-trace: " .. path .. ":2: a spawn event has 0 fields after the task, not 3\n", err)
      assert.is_false(exists(html))
    end)
    it("on a missing file", function()
      local status, _, err = run({ path .. ".missing" })
      assert.equal(1, status)
      assert.matches("^cosock%-trace: cannot open " .. path:gsub("%p", "%%%0") .. "%.missing", err)
    end)
    for _, c in ipairs({
      { {}, "no trace file given" },
      { { "a", "b" }, "one trace file at a time (a, then b)" },
      { { "a", "--top", "0" }, "--top needs a whole number >= 1, not 0" },
      { { "a", "--top" }, "--top needs a whole number >= 1, not nil" },
      { { "a", "-o" }, "-o needs a file name" },
      { { "a", "--chrome" }, "--chrome needs a file name" },
      { { "a", "--frob" }, "unknown option --frob" },
      { { "a", "-o", "x", "--no-html" }, "-o and --no-html together" },
    }) do
      it("on bad arguments: " .. c[2], function()
        local status, out, err = run(c[1])
        assert.equal(2, status)
        assert.equal("", out)
        assert.equal("cosock-trace: " .. c[2] .. "\n" .. cli.USAGE, err)
      end)
    end
  end)

  it("runs as a script (bin/cosock-trace) on this Lua, and -h prints the usage", function()
    local cmd = ("LUA_PATH='lua/?.lua;;' %s bin/cosock-trace %s --no-html --top 1 2>&1; echo \"status $?\""):format(
      interpreter, path)
    local out = child.command(cmd)
    assert.matches("Tasks by busy time (1 of 3):", out, 1, true)
    assert.matches("status 0\n$", out)
    out = child.command(("LUA_PATH='lua/?.lua;;' %s bin/cosock-trace 2>&1; echo \"status $?\""):format(interpreter))
    assert.matches("no trace file given", out, 1, true)
    assert.matches("status 2\n$", out)
    local status, help = run({ "-h" })
    assert.equal(0, status)
    assert.equal(cli.USAGE, help)
  end)
end)
