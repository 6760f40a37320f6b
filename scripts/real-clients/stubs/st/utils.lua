-- Stub of the hub's st.utils: the functions the cases' code calls.
local utils = {}

-- stringify_table(v, name, multi_line): a table's keys in order, one level deep.
function utils.stringify_table(v, name, _)
  local s
  if type(v) ~= "table" then
    s = tostring(v)
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for i, k in ipairs(keys) do keys[i] = k .. "=" .. tostring(v[k] == nil and v[tonumber(k)] or v[k]) end
    s = "{" .. table.concat(keys, ", ") .. "}"
  end
  return name and (name .. ": " .. s) or s
end

-- generate_uuid_v4(): a fresh id; counted, so that runs compare.
local uuids = 0
function utils.generate_uuid_v4()
  uuids = uuids + 1
  return string.format("00000000-0000-4000-8000-%012d", uuids)
end

return utils
