-- scripts/build.sh beside an in-tree configured source (./configure run at
-- the top, as an install from the source directory does): it stops before
-- configure, naming the configured directory and both ways out, instead of
-- autoconf's "source directory already configured; run make distclean
-- there first". Run on a stand-in source tree (a configure that must not
-- run, a config.status), in milliseconds.

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"exit $?\""))
  local out = p:read("*a")
  p:close()
  local body, status = out:match("^(.-)exit (%d+)\n$")
  return body, tonumber(status)
end

describe("scripts/build.sh", function()
  local top
  before_each(function()
    top = os.tmpname()
    os.remove(top)
    assert(os.execute("mkdir -p " .. top .. "/scripts"))
    assert(os.execute("cp scripts/build.sh " .. top .. "/scripts/"))
    local f = assert(io.open(top .. "/configure", "w"))
    f:write("#!/bin/sh\necho 'configure ran' >&2\nexit 3\n")
    f:close()
    assert(os.execute("chmod +x " .. top .. "/configure"))
  end)
  after_each(function() os.execute("rm -rf " .. top) end)

  it("names an in-tree configured source and how to clean it, and configures nothing", function()
    assert(io.open(top .. "/config.status", "w")):close()
    local out, status = sh("sh " .. top .. "/scripts/build.sh build")
    assert.equal(1, status)
    assert.truthy(out:find("the source directory " .. top .. " is configured in-tree", 1, true), out)
    assert.truthy(out:find("cd " .. top .. " && make distclean", 1, true), out)
    assert.is_nil(out:find("configure ran", 1, true))
  end)

  it("goes on to configure when the source is not configured in-tree", function()
    local out, status = sh("sh " .. top .. "/scripts/build.sh build")
    assert.equal(3, status)                      -- (the stand-in configure's)
    assert.truthy(out:find("configure ran", 1, true), out)
  end)
end)
