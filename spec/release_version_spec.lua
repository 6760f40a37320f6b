-- The version is configure.ac's AC_INIT and nothing else's: everything that
-- names it agrees (doc/releasing.md, step 1): NEWS's newest release, the
-- release rockspec (its file name, version, tarball and PACKAGE_VERSION),
-- the scm rockspec's PACKAGE_VERSION, debian/changelog (in a checkout: the
-- release tarball has no debian/), and the built module's _NATIVE_VERSION.

local function read(name)
  local f = io.open(name, "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local configure = assert(read("configure.ac"), "run from the top of the tree")
local version = configure:match("AC_INIT%(%[cosock%-native%], %[([^%]]+)%]")

describe("the version", function()
  it("is configure.ac's AC_INIT", function()
    assert.is_string(version)
    assert.truthy(version:match("^%d+%.%d+%.%d+$"), version)
  end)

  it("heads NEWS with the release's date", function()
    local news = assert(read("NEWS"))
    local first = news:match("\n(%d+%.%d+%.%d+[^\n]*)\n%-%-%-")
    assert.is_string(first)
    local v, date = first:match("^(%S+) %((%d%d%d%d%-%d%d%-%d%d)%)$")
    assert.equal(version, v, "NEWS's newest release: " .. first)
    assert.is_string(date)
  end)

  it("is the release rockspec's, with the tarball of that version", function()
    local name = "rockspecs/cosock-native-" .. version .. "-1.rockspec"
    local spec = assert(read(name), name .. " is missing")
    assert.equal(version .. "-1", spec:match('\nversion = "([^"]+)"'))
    assert.truthy(spec:find('PACKAGE_VERSION="' .. version .. '"', 1, true))
    local url = spec:match('\n  url = "([^"]+)"')
    assert.equal("cosock-native-" .. version .. ".tar.gz", url:match("[^/]+$"))
    assert.equal("cosock-native-" .. version, spec:match('\n  dir = "([^"]+)"'))
  end)

  it("is what the scm rockspec builds", function()
    local spec = assert(read("rockspecs/cosock-native-scm-1.rockspec"))
    assert.truthy(spec:find('PACKAGE_VERSION="' .. version .. '"', 1, true))
  end)

  it("is debian/changelog's upstream version (in a checkout)", function()
    local changelog = read("debian/changelog")
    if changelog == nil then
      -- (the release tarball: the packaging is not part of it)
      assert.is_nil(read("debian/control"))
      return
    end
    local v = changelog:match("^lua%-cosock%-native %(([^)]+)%)")
    assert.equal(version, v:match("^(.-)%-%d+$"))
  end)

  it("is the built module's", function()
    assert.equal(version, require("cosock")._NATIVE_VERSION)
  end)
end)
