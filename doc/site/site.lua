-- doc/site/site.lua: pandoc Lua filter of the documentation site
-- (scripts/build-doc.sh). The Markdown keeps the links that work on GitHub and
-- in a checkout (README.md, doc/NAME.md, ../examples/NAME.lua); the site has
-- every page in one directory (README.md -> index.html, doc/NAME.md ->
-- NAME.html) with the examples beside it (../examples/), as installed under
-- $(docdir)/html and $(docdir)/examples. A link to any other file of the
-- repository is an error: the site would not have it. The filter also gives
-- each page its title and the navigation (doc/site/nav.md), the current
-- page marked.

local input = PANDOC_STATE.input_files[1] or ""
-- The source's directory relative to the top of the repository: "" or "doc/".
local here = input:match("doc/[^/]*%.md$") and "doc/"
  or input:match("doc/site/[^/]*%.md$") and "doc/site/" or ""

local function script_dir()
  return (PANDOC_SCRIPT_FILE or ""):match("^(.*/)") or "./"
end

local paths = dofile(script_dir() .. "paths.lua")
local normalize, site_target = paths.normalize, paths.site_target

local function read_nav()
  local f = assert(io.open(script_dir() .. "nav.md"))
  local text = f:read("a")
  f:close()
  return text
end

-- The navigation's label of each page, by repository path ("doc/dns.md" ->
-- "Name lookups"); the README is "the README".
local labels = { ["README.md"] = "the README" }
for label, target in read_nav():gmatch("%[([^%]]+)%]%(([^%)]+)%)") do
  local path = normalize("doc/site/" .. target)
  labels[path] = labels[path] or label
end

-- The name of a page (its label in the navigation, else its first heading),
-- or the heading of its section id.
local headings = {}
local function title_of(path, id)
  if not id and labels[path] then return labels[path] end
  if not headings[path] then
    local f = io.open(path)
    if not f then return nil end
    local doc = pandoc.read(f:read("a"), "gfm")
    f:close()
    local t = {}
    for _, b in ipairs(doc.blocks) do
      if b.t == "Header" then
        local text = pandoc.utils.stringify(b.content)
        t[1] = t[1] or (b.level == 1 and text) or nil
        t[b.identifier] = text
      end
    end
    headings[path] = t
  end
  return headings[path][id or 1]
end

local function rewrite(link, from)
  local target = link.target
  if target:match("^%a[%w+.-]*:") or target:match("^#") then return link end
  local path, frag = target:match("^([^#]*)#?(.*)$")
  local repo_path = normalize(from .. path)
  local site = site_target(repo_path)
  if not site then
    error(("%s: the link to %q leads to no page of the documentation site"):format(input, target))
  end
  link.target = site .. (frag ~= "" and "#" .. frag or "")
  -- A link whose text is the file's name ([doc/dns.md](doc/dns.md)) reads
  -- the page's name instead (the section's, for a link to a section).
  if pandoc.utils.stringify(link.content):match("%.md$") then
    local title = title_of(repo_path)
    local section = frag ~= "" and title_of(repo_path, frag)
    if section then title = (title or repo_path) .. ": " .. section end
    if title then link.content = { pandoc.Str(title) } end
  end
  return link
end

-- The navigation: nav.md's list, its links made the site's, the one to this
-- page with the class "current".
local function navigation()
  local doc = pandoc.read(read_nav(), "gfm")
  local self = site_target(normalize(here .. input:match("[^/]*$")))
  return pandoc.walk_block(pandoc.Div(doc.blocks), {
    Link = function(link)
      link = rewrite(link, "doc/site/")
      if link.target == self then link.classes:insert("current") end
      return link
    end,
  }).content
end

local title
return {
  {
    Header = function(h)
      if h.level == 1 and not title then title = pandoc.utils.stringify(h.content) end
    end,
    Link = function(link) return rewrite(link, here) end,
  },
  {
    Meta = function(meta)
      meta.pagetitle = meta.pagetitle or title or input
      meta.nav = pandoc.MetaBlocks(navigation())
      return meta
    end,
  },
}
