-- Regression: the task dump's header quoted a task's name with %q, which
-- writes a newline as a backslash and a real newline: a name with one split
-- the header line in two ("task 1 "a\" / "b" ..."), and the stall report's
-- line for a signal so named alike. Both are one line now ("a\nb").

local cosock = require "cosock"
local tasks = require "cosock.tasks"

describe("regress: a name with a newline in the dump and the stall report", function()
  before_each(function() cosock.reset() end)
  after_each(function() cosock.reset() end)

  it("the dump's header of a task so named is one line", function()
    cosock.spawn(function() cosock.socket.sleep(1) end, "first\nsecond")
    local out = {}
    tasks.dump(function(s) out[#out + 1] = s end)
    local text = table.concat(out)
    local header = text:match("\n(task [^\n]*)\n")
    assert.is_string(header)
    assert.matches('^task 1 "first\\nsecond" ready %(spawned at ', header)
  end)

  it("the stall report's line for a signal so named is one line", function()
    cosock.spawn(function() cosock.signal.wait("first\nsecond") end, "waiter")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    local line = err:match("\n([^\n]*for the signal [^\n]*)")
    assert.is_string(line, err)
    assert.matches('for the signal "first\\nsecond" %(cosock.signal%), which nobody raised', line)
  end)
end)
