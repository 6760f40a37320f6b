-- doc/site/paths.lua: where a repository file is on the documentation site.
-- One answer for the site's filter (doc/site/site.lua, in pandoc) and the
-- link spec (spec/doc_links_spec.lua, in busted): both dofile this file.
--   P.normalize("doc/../README.md") -> "README.md"
--   P.site_target(path) -> the page's address on the site, or nil when the
--     site has no such page: doc/index.md -> index.html (the home page),
--     README.md -> readme.html, doc/NAME.md -> NAME.html, examples/FILE ->
--     ../examples/FILE (installed beside html/), doc/img/FILE -> img/FILE
--     (a picture, copied there by scripts/build-doc.sh)

local P = {}

function P.normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

function P.site_target(path)
  if path == "README.md" then return "readme.html" end
  local page = path:match("^doc/([^/]+)%.md$")
  if page then return page .. ".html" end
  if path:match("^examples/[^/]+$") then return "../" .. path end
  if path:match("^doc/img/[^/]+%.png$") then return path:sub(5) end
  return nil
end

return P
