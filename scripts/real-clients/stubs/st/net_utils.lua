-- Stub of the hub's st.net_utils: validate_ipv4_string, which also takes an
-- address followed by ":port" here (the cases' servers listen on a port the
-- system picks; the hub's function would reject it and never send).
local net_utils = {}
function net_utils.validate_ipv4_string(s)
  if type(s) ~= "string" then return false end
  local ip = s:match("^([%d.]+):%d+$") or s
  local parts = { ip:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return false end
  for _, p in ipairs(parts) do
    if tonumber(p) > 255 then return false end
  end
  return true
end
return net_utils
