-- Regression: cosock.ossignal.receiver compared a name as a C string, so
-- "USR1\0anything" took SIGUSR1; and its errors named a line of
-- cosock/ossignal.lua (the Lua function that called the C one), not the
-- program's. The whole string must now be the name, and the errors carry the
-- caller's position.

local cosock = require "cosock"
local ossignal = require "cosock.ossignal"

describe("regress: cosock.ossignal.receiver's names and errors", function()
  it("refuses a name with a NUL in it, saying so", function()
    local ok, err = pcall(ossignal.receiver, "USR1\0anything")
    assert.is_false(ok)
    assert.are.equal("bad argument #1 to 'receiver' (unknown signal 'USR1\\0...': INT, TERM, HUP, "
      .. "QUIT, USR1, USR2, CHLD, WINCH, ALRM or PIPE expected)", err)
    ok, err = pcall(ossignal.receiver, "TERM", "SIGHUP\0")
    assert.is_false(ok)
    assert.matches("^bad argument #2 to 'receiver' %(unknown signal 'SIGHUP\\0%.%.%.'", err)
  end)

  it("names the caller's line in its errors", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      ossignal.receiver("NOSUCH")
    end)
    assert.is_false(ok)
    assert.are.equal(("spec/regress/ossignal_name_with_nul_spec.lua:%d: bad argument #1 to 'receiver' "
      .. "(unknown signal 'NOSUCH': INT, TERM, HUP, QUIT, USR1, USR2, CHLD, WINCH, ALRM or PIPE expected)"):format(line),
      err)
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      ossignal.receiver()
    end)
    assert.is_false(ok)
    assert.are.equal(("spec/regress/ossignal_name_with_nul_spec.lua:%d: cosock.ossignal.receiver: no signal named")
      :format(line), err)
  end)

  it("still takes a name with or without SIG", function()
    local rx = ossignal.receiver("SIGUSR2", "USR2")
    assert.matches("^cosock.ossignal.receiver", tostring(rx))
    rx:close()
    assert.are.equal(0, cosock.stats().tasks)
  end)
end)
