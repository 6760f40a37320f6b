-- Regression: `cosock-trace app.trace -o app.trace` (or --chrome app.trace)
-- read the trace, then wrote the timeline over it: the only copy of a run's
-- trace was gone, and the command said it succeeded. -o and --chrome on
-- the trace itself, or on each other, are now usage errors (status 2) and
-- nothing is written; a non-string argument to main raises.

local cli = require "cosock.trace.cli"
local gen = require "spec.support.trace_gen"

local function run(args)
  local out, err = {}, {}
  local status = cli.main(args, function(s) out[#out + 1] = s end, function(s) err[#err + 1] = s end)
  return status, table.concat(out), table.concat(err)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("regress: cosock-trace never writes over the trace it reads", function()
  local dir, path, before
  before_each(function()
    path = os.tmpname()
    gen.small(path)
    before = read(path)
    dir = path:match("^(.*)/") or "."
  end)
  after_each(function() os.remove(path) end)

  local cases = {
    { "-o on the trace", function() return { path, "-o", path } end, "%-o .* would overwrite the trace itself" },
    { "-o on another spelling of it", function() return { path, "-o", (path:gsub("/([^/]*)$", "/./%1")) } end,
      "%-o .* would overwrite the trace itself" },
    { "--chrome on the trace", function() return { path, "--no-html", "--chrome", path } end,
      "%-%-chrome .* would overwrite the trace itself" },
    { "-o and --chrome on one file", function() return { path, "-o", path .. ".x", "--chrome", path .. ".x" } end,
      "the timeline and %-%-chrome are both" },
    { "--chrome on the default timeline", function() return { path, "--chrome", path .. ".html" } end,
      "the timeline and %-%-chrome are both" },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. ": status 2, nothing written, the trace as it was", function()
      local status, out, err = run(c[2]())
      assert.are.equal(2, status)
      assert.are.equal("", out)
      assert.matches("^cosock%-trace: " .. c[3], err)
      assert.are.equal(before, read(path))
      assert.is_nil(io.open(path .. ".x", "rb"))
      assert.is_nil(io.open(path .. ".html", "rb"))
    end)
  end

  it("still writes elsewhere", function()
    local status = run({ path, "-o", path .. ".x" })
    assert.are.equal(0, status)
    assert.matches("^<!DOCTYPE html>", read(path .. ".x"))
    os.remove(path .. ".x")
    assert.are.equal(before, read(path))
    assert.is_string(dir)
  end)

  it("raises for an argument that is not a string", function()
    local ok, err = pcall(cli.main, { path, 5 })
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'main' %(strings expected, got number at %[2%]%)", err)
  end)
end)
