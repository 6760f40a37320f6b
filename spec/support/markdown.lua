-- spec/support/markdown.lua: just enough of GitHub's Markdown for the specs
-- of the documents (spec/doc_links_spec.lua, spec/doc_code_spec.lua): fenced
-- code blocks, inline links, and the ids of headings and <a id> anchors as
-- GitHub and pandoc's gfm reader make them.
--   M.read(path)        -> the file's text, or nil
--   M.blocks(text)      -> { {info =, code =, line =}, ... } the fenced blocks
--   M.links(text)       -> { {text =, target =, line =}, ... } outside code
--   M.ids(text)         -> set of the ids a page has
--   M.slug(heading)     -> the id of a heading's text (without the #s)

local M = {}

function M.read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- Calls fn(line, n) for each line outside fenced code blocks, and
-- block(info, code, n) for each fenced block (n: its opening line).
local function walk(text, fn, block)
  local fence, info, code, start
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if fence then
      if line:match("^%s*" .. fence .. "%s*$") then
        if block then block(info, table.concat(code, "\n"), start) end
        fence = nil
      else
        code[#code + 1] = line
      end
    else
      local f, i = line:match("^%s*(```+)%s*(.-)%s*$")
      if f then
        fence, info, code, start = f, i, {}, n
      else
        fn(line, n)
      end
    end
  end
end

function M.blocks(text)
  local out = {}
  walk(text, function() end, function(info, code, line)
    out[#out + 1] = { info = info, code = code, line = line }
  end)
  return out
end

-- Inline code spans out of a line (their brackets are no links).
local function strip_code(line)
  return (line:gsub("(`+)(.-)%1", function(_, s) return ("x"):rep(#s) end))
end

function M.links(text)
  local out = {}
  -- A link may span lines: join the paragraph's lines first.
  local para, first = {}, nil
  local function flush()
    if #para == 0 then return end
    local s = table.concat(para, " ")
    for txt, target in s:gmatch("%[([^%]]*)%]%(([^%s%)]*)[^%)]*%)") do
      out[#out + 1] = { text = txt, target = target, line = first }
    end
    para, first = {}, nil
  end
  walk(text, function(line, n)
    if line:match("^%s*$") then flush() return end
    -- keep the link text's code spans readable, drop their brackets' meaning
    local kept = line:gsub("(`+)(.-)%1", function(_, s) return "`" .. s:gsub("[%[%]]", "") .. "`" end)
    para[#para + 1] = kept
    first = first or n
  end, flush)
  flush()
  return out
end

function M.slug(heading)
  local s = heading
  s = s:gsub("%[([^%]]*)%]%([^%)]*%)", "%1")  -- a link: its text
  s = s:gsub("<[^>]*>", "")                   -- raw HTML tags
  s = s:gsub("[`*]", "")
  s = s:lower()
  s = s:gsub("[^%w _%-]", "")
  s = s:gsub(" ", "-")
  return s
end

function M.ids(text)
  local ids, seen = {}, {}
  walk(text, function(line)
    local h = line:match("^#+%s+(.-)%s*#*%s*$")
    if h then
      local base = M.slug(h)
      local id = base
      if seen[base] then id = base .. "-" .. seen[base] end
      seen[base] = (seen[base] or 0) + 1
      ids[id] = true
    end
    for id in strip_code(line):gmatch('<a%s+id="([^"]+)"') do ids[id] = true end
  end)
  return ids
end

return M
