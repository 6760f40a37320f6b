-- cosock.trace.file: reads a saved trace (the text format trace.save writes;
-- doc/tracing.md, "The file format") into the event tables trace.events()
-- returns. Pure Lua, no cosock needed: cosock-trace runs it on any Lua 5.1+.
--   read(path)          -> {meta = {...}, events = {...}}; raises "path:line: why"
--   parse(text, name)   -> the same from a string (name is used in errors)
-- Unknown meta keys and event kinds are kept out silently (a newer writer
-- may add them); a known kind with a bad or missing field is an error.

local M = {}

-- The fields after <t> <kind> <task> of each kind, in file order; "number"
-- or "count" (a whole number >= 0) marks a number (nil when written "-").
M.FIELDS = {
  spawn = { { "parent", "count" }, { "name" }, { "site" } },
  run = {},
  wait = { { "what" }, { "detail" }, { "timeout", "number" } },
  wake = { { "cause" }, { "by", "count" }, { "detail" } },
  ["end"] = { { "how" }, { "error" } },
  poll = { { "slept", "number" }, { "nready", "count" } },
  timers = { { "count", "count" } },
  note = { { "what" }, { "detail" } },
}

-- Meta keys whose value is a number.
local NUMERIC_META = { size = true, recorded = true, dropped = true, started = true }

local ESCAPES = { t = "\t", n = "\n", r = "\r", ["\\"] = "\\" }

local function unescape(s, fail)
  if not s:find("\\", 1, true) then return s end
  return (s:gsub("\\(.?)", function(c)
    local r = ESCAPES[c]
    if not r then fail(("bad escape '\\%s'"):format(c)) end
    return r
  end))
end

-- Splits a line on TABs (an empty field is kept).
local function split(line)
  local out, pos = {}, 1
  while true do
    local tab = line:find("\t", pos, true)
    if not tab then
      out[#out + 1] = line:sub(pos)
      return out
    end
    out[#out + 1] = line:sub(pos, tab - 1)
    pos = tab + 1
  end
end

local function number(s)
  -- tonumber takes hex and surrounding spaces; a trace writes plain decimals.
  if not s:match("^%-?[%d.]+[eE]?[-+]?%d*$") then return nil end
  local n = tonumber(s)
  -- (1e999 is inf: no time, and no view can place it)
  if n == nil or n ~= n or n == math.huge or n == -math.huge then return nil end
  return n
end

-- A time or a duration (t, slept): within 1e12 s of the trace's start
-- (about 31,700 years; a writer's never come near: cosock.sim caps a wait at
-- a year), so that the views' differences and nanoseconds stay finite.
local function seconds(s)
  local n = number(s)
  if n and (n > 1e12 or n < -1e12) then return nil end
  return n
end

-- A whole number >= 0 (task ids, counts), up to 2^53 - 1 (beyond it a
-- number is no longer whole in every Lua, nor printable as an integer).
local function count(s)
  local n = s:match("^%d+$") and tonumber(s)
  if n and n > 9007199254740991 then return nil end
  return n
end

-- One event line (already split) into an event table, or nil for an
-- unknown kind.
local function event(f, fail)
  if #f < 4 then fail("an event line needs at least E, time, kind and task") end
  local t = seconds(f[2])
  if not t then fail(("bad time %q"):format(f[2])) end
  local kind = f[3]
  local spec = M.FIELDS[kind]
  if not spec then return nil end
  local task = count(f[4])
  if not task then fail(("bad task id %q in a %s event"):format(f[4], kind)) end
  local e = { t = t, kind = kind, task = task }
  if #f - 4 < #spec then
    fail(("a %s event has %d fields after the task, not %d"):format(kind, #f - 4, #spec))
  end
  for i, field in ipairs(spec) do
    local raw = f[4 + i]
    if raw ~= "-" and raw ~= "" then
      if field[2] then
        local n = (field[2] == "count" and count or field[1] == "timeout" and number or seconds)(raw)
        if not n then fail(("bad %s %q in a %s event"):format(field[1], raw, kind)) end
        e[field[1]] = n
      else
        e[field[1]] = unescape(raw, fail)
      end
    end
  end
  return e
end

-- Calls each(line) for every line of text, CR LF or LF ended.
local function parse_lines(lines, name)
  local meta, events = {}, {}
  local lineno = 0
  local function fail(msg)
    error(("%s:%d: %s"):format(name, lineno, msg), 0)
  end
  for line in lines do
    lineno = lineno + 1
    if line:sub(-1) == "\r" then line = line:sub(1, -2) end
    if lineno == 1 then
      local version = line:match("^cosock%-trace (%d+)$")
      if not version then
        fail(("not a cosock trace (the first line is %q, not \"cosock-trace 1\")"):format(line:sub(1, 40)))
      elseif version ~= "1" then
        fail(("trace format version %s: this reader knows version 1"):format(version))
      end
    elseif line ~= "" then
      local f = split(line)
      if f[1] == "E" then
        local e = event(f, fail)
        if e then events[#events + 1] = e end
      elseif f[1] == "M" then
        if #f < 3 then fail("a meta line needs M, key and value") end
        local key, value = f[2], unescape(f[3], fail)
        if NUMERIC_META[key] then
          local n = count(value)
          if not n then fail(("meta %s: bad number %q"):format(key, value)) end
          value = n
        end
        meta[key] = value
      else
        fail(("a line starts with M or E, not %q"):format(f[1]:sub(1, 20)))
      end
    end
  end
  if lineno == 0 then
    lineno = 1
    fail("empty file: not a cosock trace")
  end
  return { meta = meta, events = events }
end

function M.parse(text, name)
  if type(text) ~= "string" then
    error("bad argument #1 to 'parse' (string expected, got " .. type(text) .. ")", 2)
  end
  name = name or "trace"
  if text ~= "" and text:sub(-1) ~= "\n" then text = text .. "\n" end
  return parse_lines(text:gmatch("([^\n]*)\n"), name)
end

function M.read(path)
  if type(path) ~= "string" then
    error("bad argument #1 to 'read' (string expected, got " .. type(path) .. ")", 2)
  end
  if path:find("\0", 1, true) then -- (io.open would read the file named by what comes before it)
    error("bad argument #1 to 'read' (path without a NUL expected)", 2)
  end
  local fh, err = io.open(path, "rb")
  if not fh then error("cosock-trace: cannot open " .. tostring(err), 0) end
  local ok, res = pcall(parse_lines, fh:lines(), path)
  fh:close()
  if not ok and type(res) == "string" and res:sub(1, #path + 1) ~= path .. ":" then
    -- (the read itself failed, a directory: the lines iterator's error)
    res = "cosock-trace: cannot read " .. path .. ": " .. res:gsub("^[^\n]-:%d+: ", "")
  end
  if not ok then error(res, 0) end
  return res
end

return M
