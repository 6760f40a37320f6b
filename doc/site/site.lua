-- doc/site/site.lua: pandoc Lua filter of the documentation site
-- (scripts/build-doc.sh). The Markdown keeps the links that work on GitHub and
-- in a checkout (README.md, doc/NAME.md, ../examples/NAME.lua); the site has
-- every page in one directory (doc/index.md -> index.html, its home page;
-- README.md -> readme.html; doc/NAME.md -> NAME.html) with the examples beside it (../examples/), as installed under
-- $(docdir)/html and $(docdir)/examples. A link to any other file of the
-- repository, or to a section its page lacks, is an error. The filter also gives
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

-- What the site's filter needs of a page: its first heading and its ids
-- (pandoc's heading ids, and <a id="..."> anchors), each id with its
-- heading's text (or true).
local pages = {}
local function page(path)
  if pages[path] == nil then
    local f = io.open(path)
    if not f then
      pages[path] = false
      return nil
    end
    local doc = pandoc.read(f:read("a"), "gfm")
    f:close()
    local info = { ids = {} }
    local function anchors(el)
      for id in el.text:gmatch('id="([^"]+)"') do info.ids[id] = info.ids[id] or true end
    end
    pandoc.walk_block(pandoc.Div(doc.blocks), {
      Header = function(h)
        local text = pandoc.utils.stringify(h.content)
        if h.level == 1 then info.title = info.title or text end
        info.ids[h.identifier] = text
      end,
      RawInline = anchors,
      RawBlock = anchors,
    })
    pages[path] = info
  end
  return pages[path] or nil
end

-- Makes a link of the Markdown the site's. Fails (and so make doc) on a
-- link to a file the site has no page for, or to an id its page lacks.
local function rewrite(link, from)
  local target = link.target
  if target:match("^%a[%w+.-]*:") then return link end
  local path, frag = target:match("^([^#]*)#?(.*)$")
  local repo_path = normalize(from .. (path ~= "" and path or input:match("[^/]*$")))
  local site = site_target(repo_path)
  if not site then
    error(("%s: the link to %q leads to no page of the documentation site"):format(input, target))
  end
  local info = repo_path:match("%.md$") and page(repo_path) or nil
  if frag ~= "" and info and not info.ids[frag] then
    error(("%s: the link to %q leads to no section of %s"):format(input, target, repo_path))
  end
  if path == "" then return link end
  link.target = site .. (frag ~= "" and "#" .. frag or "")
  -- A link whose text is the file's name ([doc/dns.md](doc/dns.md)) reads
  -- the page's name in the navigation (or its title) instead, and the
  -- section's heading for a link to a section.
  if pandoc.utils.stringify(link.content):match("%.md$") and info then
    local title = labels[repo_path] or info.title or repo_path
    local section = frag ~= "" and info.ids[frag]
    if type(section) == "string" then title = title .. ": " .. section end
    link.content = { pandoc.Str(title) }
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
