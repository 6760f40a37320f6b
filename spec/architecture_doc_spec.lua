-- doc/architecture.md against the tree: every C file of src/ and every Lua
-- module of lua/cosock/ is named there, and every source file it names
-- exists (the map is read before touching the loop: a file it leaves out or
-- one that moved makes it lie).

local function read(path)
  local f = assert(io.open(path))
  local text = f:read("*a")
  f:close()
  return text
end

local function lines_of(cmd)
  local out, p = {}, assert(io.popen(cmd))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local doc = read("doc/architecture.md")

local function named(word)
  return doc:find(word, 1, true) ~= nil
end

describe("doc/architecture.md", function()
  it("names every C file of src/ (a header goes with its .c)", function()
    local missing = {}
    for _, path in ipairs(lines_of("ls src/*.c src/*/*.c src/*/*.h")) do
      local base = path:match("[^/]+$")
      local stem = base:match("^(.*)%.h$")
      local has_c = stem and io.open((path:gsub("%.h$", ".c")))
      if has_c then has_c:close()
      elseif not named(base) then missing[#missing + 1] = path end
    end
    assert.same({}, missing)
  end)

  it("names every module of lua/cosock/ (by its file, or its folder and its name)", function()
    local missing = {}
    for _, path in ipairs(lines_of("cd lua && ls cosock/*.lua cosock/*/*.lua")) do
      local dir, name = path:match("^cosock/([^/]+)/([^/]+)%.lua$")
      local ok
      if dir then
        ok = doc:find("%f[%w_]" .. dir .. "/") ~= nil and doc:find("%f[%w_]" .. name .. "%f[^%w_]") ~= nil
      else
        ok = named(path)
      end
      if not ok then missing[#missing + 1] = "lua/" .. path end
    end
    assert.same({}, missing)
  end)

  it("names only source files that exist", function()
    local have = {}
    for _, path in ipairs(lines_of("ls src/*.c src/*/*.[ch] lua/*.lua lua/cosock/*.lua lua/cosock/*/*.lua")) do
      have[path:match("[^/]+$")] = true
    end
    have["features.h"] = true -- (named as glibc's, which feature_list.h must not shadow)
    local bad = {}
    for word in doc:gmatch("`([%w_]+%.[ch])`") do
      if not have[word] then bad[#bad + 1] = word end
    end
    assert.same({}, bad)
  end)
end)
