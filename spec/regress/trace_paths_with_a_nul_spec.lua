-- Regression: trace.save, cosock.trace.file.read and the views' write took a
-- path with a NUL in it, and io.open used what comes before the NUL:
-- trace.save("app.trace\0x") wrote app.trace, another file than the one
-- named, and said it succeeded. They now refuse such a path.

local cosock = require "cosock"
local trace = require "cosock.trace"
local tfile = require "cosock.trace.file"
local html = require "cosock.trace.html"
local chrome = require "cosock.trace.chrome"

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  return err
end

describe("regress: a trace path with a NUL in it", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("is refused by save, read and the views' write, and nothing is written", function()
    local path = os.tmpname()
    os.remove(path)
    trace.start({ size = 16 })
    trace.stop()
    assert.matches("bad argument #1 to 'cosock.trace.save' %(path without a NUL expected, got ",
      err_of(trace.save, path .. "\0.other"))
    assert.is_nil(io.open(path, "rb"))         -- (it was written)
    trace.save(path)
    assert.are.equal("bad argument #1 to 'read' (path without a NUL expected)",
      err_of(tfile.read, path .. "\0.other"))
    local tr = tfile.read(path)
    assert.are.equal("bad argument #2 to 'write' (path without a NUL expected)",
      err_of(html.write, tr, path .. ".html\0"))
    assert.are.equal("bad argument #2 to 'write' (path without a NUL expected)",
      err_of(chrome.write, tr, path .. ".json\0"))
    assert.is_nil(io.open(path .. ".html", "rb"))
    assert.is_nil(io.open(path .. ".json", "rb"))
    os.remove(path)
  end)
end)
