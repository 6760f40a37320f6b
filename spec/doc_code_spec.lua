-- Every Lua program of the README and of every page of doc/ runs against the
-- build as written, under the default settings (a program that wants another
-- says so itself, e.g. cosock.profile("new")), so the documents cannot rot. A ```lua
-- block is a whole program unless its info string says `lua fragment` (a
-- piece of a program: not run). A program must end without an error; when
-- the next block is ```output, it must print exactly that (```output
-- unordered: the same lines in any order; ```output virtual-clock: the
-- program runs with cosock.sim's virtual clock on, for an output whose order
-- is the order of its deadlines: a loaded machine could reorder deadlines
-- 0.1 s apart on the real clock, the virtual one never does). Whitespace runs
-- compare as one space (print separates with tabs).

local md = require "spec.support.markdown"
local interpreter = require "spec.support.interpreter"
local child = require "spec.support.child"

-- Every page: the README and each doc/*.md (a page without programs has none
-- to run).
local PAGES = { "README.md" }
do
  local p = assert(io.popen("ls doc"))
  for name in p:lines() do
    if name:match("%.md$") then PAGES[#PAGES + 1] = "doc/" .. name end
  end
  p:close()
end
local TIME_LIMIT = 60   -- seconds; a program waits a few seconds at most

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a program in a child process; returns its output and exit status.
local function run(code, virtual_clock)
  local file = os.tmpname()
  local f = assert(io.open(file, "w"))
  f:write(code, "\n")
  f:close()
  local init = virtual_clock and "LUA_INIT=" .. shell_quote("require('cosock.sim').on()") .. " " or ""
  local cmd = ("%sLUA_PATH=%s LUA_CPATH=%s timeout %d %s %s 2>&1; echo \"exit status: $?\""):format(
    init, shell_quote(package.path), shell_quote(package.cpath), TIME_LIMIT, interpreter, file)
  local out = child.command(cmd)
  os.remove(file)
  local body, status = out:match("^(.-)exit status: (%d+)\n$")
  return body, tonumber(status)
end

local function lines(text, unordered)
  local t = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("%s+", " "):gsub(" $", "")
    t[#t + 1] = line
  end
  while t[#t] == "" do t[#t] = nil end
  if unordered then table.sort(t) end
  return t
end

-- The programs of a page: { {code =, line =, output =, unordered =} }.
local function programs(page)
  local out, last = {}, nil
  for _, b in ipairs(md.blocks(assert(md.read(page)))) do
    local lang, mark = b.info:match("^(%S*)%s*(.-)$")
    if lang == "lua" then
      assert(mark == "" or mark == "fragment",
        ("%s:%d: a lua block is a program or `lua fragment`, not %q"):format(page, b.line, b.info))
      last = nil
      if mark == "" then
        last = { code = b.code, line = b.line }
        out[#out + 1] = last
      end
    elseif lang == "output" then
      assert(last, ("%s:%d: an output block without a program before it"):format(page, b.line))
      assert(mark == "" or mark == "unordered" or mark == "virtual-clock",
        ("%s:%d: an output block is plain, `output unordered` or `output virtual-clock`, not %q"):format(
          page, b.line, b.info))
      last.output, last.unordered, last.virtual_clock = b.code, mark == "unordered", mark == "virtual-clock"
      last = nil
    end
  end
  return out
end

describe("the documents' programs", function()
  for _, page in ipairs(PAGES) do
    for _, prog in ipairs(programs(page)) do
      it(("%s:%d runs%s"):format(page, prog.line, prog.output and " and prints what follows it" or ""),
        function()
          local out, status = run(prog.code, prog.virtual_clock)
          assert.equal(0, status, out)
          if prog.output then
            assert.same(lines(prog.output, prog.unordered), lines(out, prog.unordered))
          end
        end)
    end
  end

  it("include the getting-started page's four (a server and a client, a timer, a channel, a deadline)", function()
    assert.equal(4, #programs("doc/getting-started.md"))
  end)
end)
