-- The documents' links, checked on the Markdown itself (so this runs with or
-- without pandoc): every link between pages leads to a page the site has
-- (README.md, doc/NAME.md, a file of examples/) and every #section to an id
-- that page has; a link text ending in ".md" names the file the link leads to
-- (the site shows that page's title instead); every page is in the site's
-- navigation (doc/site/nav.md). The site's filter (doc/site/site.lua) makes
-- the same links the site's.

local md = require "spec.support.markdown"

local function doc_pages()
  local pages = { "README.md" }
  local p = assert(io.popen("ls doc"))
  for name in p:lines() do
    if name:match("%.md$") then pages[#pages + 1] = "doc/" .. name end
  end
  p:close()
  return pages
end

local paths = dofile("doc/site/paths.lua")
local normalize = paths.normalize

-- What is wrong with one link of the page `from`, or nil.
local function check(from, link, ids_of)
  local target = link.target
  if target:match("^%a[%w+.-]*:") then return nil end   -- https:, mailto:
  local path, frag = target:match("^([^#]*)#?(.*)$")
  local page = from
  if path ~= "" then
    page = normalize((from:match("^(.*/)") or "") .. path)
    if not paths.site_target(page) then return "leads to " .. page .. ", which the site has no page for" end
    if not md.read(page) then return "leads to " .. page .. ", which does not exist" end
  end
  -- A text ending in .md must be the file's name: the site shows the page's
  -- title instead (doc/site/site.lua).
  local text = link.text:gsub("`", "")
  if text:match("%.md$") and text ~= page and text ~= page:match("[^/]*$") then
    return "its text names a file other than the one it leads to"
  end
  if frag ~= "" then
    local ids = ids_of(page)
    if not ids or not ids[frag] then return "no section #" .. frag .. " in " .. page end
  end
  return nil
end

describe("the documents' links", function()
  local cache = {}
  local function ids_of(page)
    if cache[page] == nil then
      local text = md.read(page)
      cache[page] = text and page:match("%.md$") and md.ids(text) or false
    end
    return cache[page] or nil
  end

  it("lead to pages the site has and sections those pages have", function()
    local bad = {}
    for _, page in ipairs(doc_pages()) do
      for _, link in ipairs(md.links(assert(md.read(page)))) do
        local why = check(page, link, ids_of)
        if why then
          bad[#bad + 1] = ("%s:%d: [%s](%s) %s"):format(page, link.line, link.text, link.target, why)
        end
      end
    end
    assert.same({}, bad)
  end)

  it("include every page in the navigation, and the navigation's links work", function()
    local nav = assert(md.read("doc/site/nav.md"))
    local listed, bad = {}, {}
    for _, link in ipairs(md.links(nav)) do
      local why = check("doc/site/nav.md", link, ids_of)
      if why then bad[#bad + 1] = link.target .. " " .. why end
      listed[normalize("doc/site/" .. link.target)] = true
    end
    for _, page in ipairs(doc_pages()) do
      if not listed[page] then bad[#bad + 1] = page .. " is not in doc/site/nav.md" end
    end
    assert.same({}, bad)
  end)

  it("are checked: a broken one is found", function()
    local ids = function(page) return page == "doc/x.md" and { here = true } or nil end
    assert.is_nil(check("README.md", { text = "x", target = "doc/reference.md" }, ids_of))
    assert.is_nil(check("doc/x.md", { text = "x", target = "#here" }, ids))
    assert.truthy(check("doc/x.md", { text = "x", target = "#there" }, ids))
    assert.is_nil(check("README.md", { text = "doc/reference.md", target = "doc/reference.md" }, ids_of))
    assert.truthy(check("README.md", { text = "doc/dns.md", target = "doc/reference.md" }, ids_of))
    assert.truthy(check("README.md", { text = "x", target = "bench/README.md" }, ids_of))
    assert.truthy(check("README.md", { text = "x", target = "doc/none.md" }, ids_of))
    assert.truthy(check("doc/reference.md", { text = "x", target = "../src/run.c" }, ids_of))
    assert.is_nil(check("doc/reference.md", { text = "x", target = "../examples/demo.lua" }, ids_of))
  end)
end)

-- The source files named in the code's comments and in the documents: each
-- path "src/..." must name a file that exists (the folders moved files once).
-- NEWS and bench/README.md are records of their day and keep its paths.
local function named_paths(text)
  local found = {}
  for path in text:gmatch("%f[%w/]src/[%w_/]+%.[ch]%f[^%w_]") do found[#found + 1] = path end
  return found
end

describe("the source paths named in comments and documents", function()
  it("name files that exist", function()
    local bad = {}
    local list = assert(io.popen("ls src/*.[ch] src/*/*.[ch] lua/*.lua lua/cosock/*.lua lua/cosock/*/*.lua "
      .. "doc/*.md README.md scripts/*.sh test/*.c spec/*.lua 2>/dev/null"))
    for file in list:lines() do
      local f = assert(io.open(file))
      local text = f:read("*a")
      f:close()
      for _, path in ipairs(named_paths(text)) do
        local g = io.open(path)
        if g then g:close() else bad[#bad + 1] = file .. " names " .. path end
      end
    end
    list:close()
    assert.same({}, bad)
  end)

  it("are found where a comment names them", function()
    assert.same({ "src/loop/park.c", "src/core.c" },
      named_paths("-- (src/loop/park.c, and src/core.c) but not lib/src/x.c"))
  end)
end)

describe("spec.support.markdown", function()
  it("makes GitHub's ids: punctuation dropped, spaces to hyphens, repeats numbered", function()
    assert.equal("module-cosocksocket", md.slug("Module `cosock.socket`"))
    assert.equal("differences-from-cosock-020", md.slug("Differences from cosock 0.2.0"))
    assert.equal("cosock_version", md.slug("`cosock._VERSION`"))
    local ids = md.ids("# A\n\n## B c\n\n```\n# not a heading\n```\n\n## B c\n<a id=\"x-y\"></a>\n")
    assert.same({ a = true, ["b-c"] = true, ["b-c-1"] = true, ["x-y"] = true }, ids)
  end)

  it("finds links over line ends and not in code", function()
    local links = md.links("see [the\nreference](doc/reference.md#x) and `[no](link)`\n\n```\n[no](link)\n```\n")
    assert.same({ { text = "the reference", target = "doc/reference.md#x", line = 1 } }, links)
  end)
end)
