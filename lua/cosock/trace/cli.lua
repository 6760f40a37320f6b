-- cosock.trace.cli: the command cosock-trace (bin/cosock-trace).
--   cosock-trace FILE [-o OUT.html] [--chrome OUT.json] [--top N] [--no-html]
-- prints the summary of a saved trace (cosock.trace.summary), writes the
-- HTML timeline (default FILE.html) and, when asked, the Chrome export.
--   main(args [, out, err]) -> exit status (0 ok, 1 a bad file, 2 usage);
--   out and err are functions taking text (default io.stdout/io.stderr).

local M = {}

M.USAGE = [[
usage: cosock-trace FILE [-o OUT.html] [--chrome OUT.json] [--top N] [--no-html]
  Prints a summary of the trace FILE (written by cosock.trace.save or the
  COSOCK_TRACE environment variable) and writes its timeline as one HTML file.
  -o, --output OUT.html  where the timeline goes (default FILE.html)
  --no-html              do not write the timeline
  --chrome OUT.json      also write the Chrome trace event format (about:tracing, Perfetto)
  --top N                lines in each list of the summary (default 10)
  -h, --help             this text
]]

-- Whether two paths name the same file as written ("./a//b" is "a/b"; a
-- link or another spelling of the same file is not seen: plain Lua has no
-- stat).
local function same_path(a, b)
  local function norm(p)
    p = p:gsub("/+", "/")
    repeat local n; p, n = p:gsub("/%./", "/") until n == 0
    return (p:gsub("^%./", ""):gsub("/%.$", ""))
  end
  return a ~= nil and b ~= nil and norm(a) == norm(b)
end

function M.main(args, out, err)
  if type(args) ~= "table" then error("bad argument #1 to 'main' (table of arguments expected, got " .. type(args) .. ")", 2) end
  if out ~= nil and type(out) ~= "function" then error("bad argument #2 to 'main' (function or nil expected, got " .. type(out) .. ")", 2) end
  if err ~= nil and type(err) ~= "function" then error("bad argument #3 to 'main' (function or nil expected, got " .. type(err) .. ")", 2) end
  out = out or function(s) io.stdout:write(s) end
  err = err or function(s) io.stderr:write(s) end
  local file, html, chrome, top, no_html
  local i = 1
  local function usage(msg)
    err("cosock-trace: " .. msg .. "\n" .. M.USAGE)
    return 2
  end
  while args[i] ~= nil do
    local a = args[i]
    if type(a) ~= "string" then
      error(("bad argument #1 to 'main' (strings expected, got %s at [%d])"):format(type(a), i), 2)
    end
    local function value()
      i = i + 1
      return args[i]
    end
    if a == "-h" or a == "--help" then
      out(M.USAGE)
      return 0
    elseif a == "-o" or a == "--output" then
      html = value()
      if not html then return usage(a .. " needs a file name") end
    elseif a == "--chrome" then
      chrome = value()
      if not chrome then return usage("--chrome needs a file name") end
    elseif a == "--top" then
      local v = value()
      top = tonumber(v or "")
      if not top or top < 1 or top ~= math.floor(top) then
        return usage("--top needs a whole number >= 1, not " .. tostring(v))
      end
    elseif a == "--no-html" then
      no_html = true
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return usage("unknown option " .. a)
    elseif file then
      return usage("one trace file at a time (" .. file .. ", then " .. a .. ")")
    else
      file = a
    end
    i = i + 1
  end
  if not file then return usage("no trace file given") end
  if no_html and html then return usage("-o and --no-html together") end
  -- (the trace may be the only copy of a run: an output never replaces it)
  local target = not no_html and (html or file .. ".html") or nil
  if same_path(target, file) then return usage("-o " .. target .. " would overwrite the trace itself") end
  if same_path(chrome, file) then return usage("--chrome " .. chrome .. " would overwrite the trace itself") end
  if same_path(chrome, target) then return usage("the timeline and --chrome are both " .. chrome) end

  local ok, res = pcall(function()
    local tfile = require "cosock.trace.file"
    local model = require("cosock.trace.model").build(tfile.read(file))
    out(require("cosock.trace.summary").text(model, { top = top or 10, name = file }))
    if not no_html then
      html = html or (file .. ".html")
      require("cosock.trace.html").write(model, html, { title = file })
      out("\ntimeline: " .. html .. "\n")
    end
    if chrome then
      require("cosock.trace.chrome").write(model, chrome)
      out("chrome trace: " .. chrome .. "\n")
    end
  end)
  if not ok then
    err("cosock-trace: " .. tostring(res):gsub("^cosock%-trace: ", "") .. "\n")
    return 1
  end
  return 0
end

return M
