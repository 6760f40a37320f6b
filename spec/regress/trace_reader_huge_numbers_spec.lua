-- Regression: cosock.trace.file took any decimal its pattern matched: a time
-- of 1e999 came back as inf, 1e300 as a time no view could place, an id of
-- 10^23 as a float. cosock-trace then raised from inside its views
-- ("html.lua:30: bad argument #1 to 'format' (number has no integer
-- representation)", a summary lasting "-nan s"), not the reader's
-- FILE:LINE error. Times and `slept` are now finite and within 1e12 s of
-- the start, timeouts finite, ids and counts whole numbers below 2^53; and
-- the timeline writes its nanoseconds with %.0f, so no finite time breaks it.

local tfile = require "cosock.trace.file"
local html = require "cosock.trace.html"
local chrome = require "cosock.trace.chrome"
local summary = require "cosock.trace.summary"

local HEAD = "cosock-trace 1\nM\tclock\treal\n"

local function parse_error(text)
  local ok, err = pcall(tfile.parse, HEAD .. text, "t.trace")
  assert.is_false(ok)
  return err
end

describe("regress: the trace reader and numbers no view can show", function()
  it("refuses a time that is not finite or lies beyond 1e12 s, naming the line", function()
    assert.are.equal('t.trace:3: bad time "1e999"', parse_error("E\t1e999\tspawn\t1\t0\tx\ta:1\n"))
    assert.are.equal('t.trace:3: bad time "-1e999"', parse_error("E\t-1e999\trun\t1\n"))
    assert.are.equal('t.trace:4: bad time "1e300"',
      parse_error("E\t0\tspawn\t1\t0\tx\ta:1\nE\t1e300\trun\t1\n"))
    assert.are.equal('t.trace:3: bad time "-2e12"', parse_error("E\t-2e12\trun\t1\n"))
  end)

  it("refuses a slept beyond 1e12 s and a timeout that is not finite", function()
    assert.are.equal('t.trace:3: bad slept "1e13" in a poll event', parse_error("E\t0\tpoll\t0\t1e13\t0\n"))
    assert.are.equal('t.trace:4: bad timeout "1e999" in a wait event',
      parse_error("E\t0\tspawn\t1\t0\tx\ta:1\nE\t0\twait\t1\tsleep\t-\t1e999\n"))
  end)

  it("refuses an id or a count of 2^53 or more", function()
    assert.are.equal('t.trace:3: bad task id "100000000000000000000000" in a spawn event',
      parse_error("E\t0\tspawn\t100000000000000000000000\t0\tx\ta:1\n"))
    assert.are.equal('t.trace:3: bad count "9007199254740992" in a timers event',
      parse_error("E\t0\ttimers\t0\t9007199254740992\n"))
    local ok, err = pcall(tfile.parse, "cosock-trace 1\nM\tdropped\t99999999999999999999\n", "t.trace")
    assert.is_false(ok)
    assert.are.equal('t.trace:2: meta dropped: bad number "99999999999999999999"', err)
  end)

  it("takes the largest of them, and every view shows it", function()
    local tr = tfile.parse(HEAD .. table.concat({
      "E\t0\tspawn\t9007199254740991\t0\tx\ta:1",
      "E\t0\twake\t9007199254740991\tspawn\t0\t-",
      "E\t0\trun\t9007199254740991",
      "E\t0\twait\t9007199254740991\tsleep\t-\t1e300",
      "E\t-1e12\tpoll\t0\t1e12\t0",
      "E\t1e12\twake\t9007199254740991\ttimer\t0\t-",
      "E\t1e12\trun\t9007199254740991",
      "E\t1e12\tend\t9007199254740991\treturned\t-",
    }, "\n") .. "\n", "t.trace")
    assert.are.equal(1e12, tr.events[6].t)
    local page = html.render(tr)
    assert.is_truthy(page:find('"dur":2000000000000000000000', 1, true))
    assert.is_nil(page:find("[,:%[]%-?inf"))        -- (no number JSON cannot read)
    assert.is_string(chrome.export(tr))
    assert.matches("2000000000000%.000000 s", summary.text(tr))
  end)
end)
