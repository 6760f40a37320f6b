-- cosock.trace.json: the small JSON writer the trace views need (numbers,
-- strings, arrays, objects with their keys in a given order). Strings are
-- made valid UTF-8 (a stray byte becomes U+FFFD) and "<" is written \u003c,
-- so that the text can sit inside an HTML <script> element.

local M = {}

local CTRL = {}
for c = 0, 31 do CTRL[string.char(c)] = ("\\u%04x"):format(c) end
CTRL["\n"], CTRL["\t"], CTRL["\r"] = "\\n", "\\t", "\\r"
CTRL['"'], CTRL["\\"], CTRL["<"], CTRL["\127"] = '\\"', "\\\\", "\\u003c", "\\u007f"

-- Replaces the bytes that do not form UTF-8 with U+FFFD.
local function utf8_clean(s)
  if not s:find("[\128-\255]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or (c >= 0xC2 and c <= 0xDF) and 2 or (c >= 0xE0 and c <= 0xEF) and 3
      or (c >= 0xF0 and c <= 0xF4) and 4 or 0
    local ok = len > 0 and i + len - 1 <= n
    for j = i + 1, i + len - 1 do
      local b = ok and s:byte(j)
      if not b or b < 0x80 or b > 0xBF then ok = false end
    end
    if ok then
      out[#out + 1] = s:sub(i, i + len - 1)
      i = i + len
    else
      out[#out + 1] = "\239\191\189"
      i = i + 1
    end
  end
  return table.concat(out)
end

function M.string(s)
  return '"' .. utf8_clean(s):gsub('[%c"\\<\127]', CTRL) .. '"'
end

-- A number as JSON has it (no inf or nan: null); integers without ".0".
function M.number(x)
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if x == math.floor(x) and x > -1e15 and x < 1e15 then return ("%d"):format(x) end
  return (("%.14g"):format(x))
end

-- value: nil (null), boolean, number, string, or a table: an array when
-- t[1] ~= nil or t is {} with no keys, else an object; an object's keys are
-- written sorted (a stable text for the same trace).
function M.encode(v)
  local ty = type(v)
  if v == nil then return "null"
  elseif ty == "boolean" then return tostring(v)
  elseif ty == "number" then return M.number(v)
  elseif ty == "string" then return M.string(v)
  elseif ty == "table" then
    local parts = {}
    if v[1] ~= nil or next(v) == nil then
      for i = 1, #v do parts[i] = M.encode(v[i]) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for i, k in ipairs(keys) do
      local val = v[k]
      if val == nil then val = v[tonumber(k)] end
      parts[i] = M.string(k) .. ":" .. M.encode(val)
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  error("cosock.trace.json: cannot encode a " .. ty, 2)
end

return M
