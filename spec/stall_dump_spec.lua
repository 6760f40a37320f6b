-- The state dump a stalled loop prints to standard output, in cosock 0.2.0's
-- shape: the DUMP STATE banners, the "threads woken in last turn" and "not
-- woken" sections, and per task its name, traceback, recvt/sendt counts,
-- timeout and last wake. Run in a child Lua so that the real standard output
-- is read (the dump uses the print there was when cosock loaded, as cosock's
-- does, so replacing print later does not silence it).

local child = require "spec.support.child"

local CHILD = [=[
local cosock = require "cosock"
print = function() end -- too late: the dump keeps cosock's own print
local _, rx1 = cosock.channel.new()
local _, rx2 = cosock.channel.new()
cosock.spawn(function() rx1:receive() end, "stuck-one")
cosock.spawn(function() cosock.socket.select({ rx2 }, nil, nil) end)
local ok, err = pcall(cosock.run)
io.write("ok=", tostring(ok), "\n", "error=", (tostring(err):gsub("\n", "|")), "\n")
]=]

local function run_child()
  local out = child.run(CHILD)
  local lines = {}
  for line in out:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines, out
end

local BANNER = "vvvvvvvvvvvvvvvvvvvvvvvv DUMP STATE vvvvvvvvvvvvvvvvvvvvvvvv"
local BANNER_END = "^^^^^^^^^^^^^^^^^^^^^^^^ DUMP STATE ^^^^^^^^^^^^^^^^^^^^^^^^"
local RULE = string.rep("=", 57)
local SEPARATOR = string.rep("-", 57)

describe("the stall dump", function()
  it("is printed to stdout in cosock 0.2.0's shape, before run's error", function()
    local lines, out = run_child()
    local i = 1
    local function take() i = i + 1; return lines[i - 1] end
    assert.equal(BANNER, take(), out)
    assert.equal("threads woken in last turn (2)", take(), out)
    assert.equal(RULE, take(), out)
    local names = {}
    for _ = 1, 2 do
      local name = take():match("^thread: [^\t]*\t(.*)$")
      assert.is_not_nil(name, out)
      names[#names + 1] = name
      assert.equal("stack traceback:", take(), out)
      assert.matches("^\t", take(), 1, false, out) -- at least one frame
      while lines[i]:sub(1, 1) == "\t" do i = i + 1 end
      assert.equal("recvt:\t1", take(), out)
      assert.equal("sendt:\t0", take(), out)
      assert.equal("timeout:\tnil", take(), out)
      assert.matches("^last wake:\t%d+$", take(), 1, false, out)
      assert.equal(SEPARATOR, take(), out)
    end
    table.sort(names)
    assert.same({ "nil", "stuck-one" }, names)
    assert.equal("threads not woken in last turn (0)", take(), out)
    assert.equal(RULE, take(), out)
    assert.equal(BANNER_END, take(), out)
    assert.equal("ok=false", take(), out)
    assert.matches("^error=[^|]*cosock%.lua:%d+: cosock tried to call socket%.select with no sockets and no timeout%. "
      .. "this is a bug, please report it, including the above dump state|", take(), 1, false, out)
    assert.is_nil(lines[i], out)
  end)
end)
