-- Stub of the hub's st.utils: the one function the cases' code calls.
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

return utils
