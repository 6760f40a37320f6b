-- bench/paired_builds.lua: compares builds (or settings) of cosock-native on
-- W1, W4 and W5 with interleaved runs: each round runs every variant once, in
-- a rotating order, and the figure is the median over the rounds of each
-- variant's rate divided by the first variant's rate in the same round, by
-- CPU time (less moved by other work on the machine than wall time). For
-- differences of a percent or two on a machine that is not idle.
--
-- Usage: lua5.3 bench/paired_builds.lua ROUNDS NAME=ROOT[:PRELUDE] ...
--   ROOT     a checkout with a build in ROOT/build (its lua/ and
--            build/src/cpath/ are used)
--   PRELUDE  Lua run before the workload (lua -e), e.g.
--            require("cosock.core").set_accounting(true)
-- Example (the old build in /tmp/old, this checkout off and on):
--   lua5.3 bench/paired_builds.lua 31 old=/tmp/old new=. \
--     'on=.:require("cosock.core").set_accounting(true)'
-- Prints per workload: each variant's median rate and its median ratio to
-- the first variant.

local rounds = tonumber(arg[1])
if not rounds or #arg < 3 then
  io.stderr:write("usage: paired_builds.lua ROUNDS NAME=ROOT[:PRELUDE] NAME=ROOT[:PRELUDE] ...\n")
  os.exit(2)
end
local here = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/.."

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local variants = {}
for i = 2, #arg do
  local name, root, prelude = arg[i]:match("^([^=]+)=([^:]+):?(.*)$")
  if not name then error("bad variant " .. arg[i]) end
  variants[#variants + 1] = { name = name, root = root, prelude = prelude }
end

local WORKLOADS = {
  { "w1", "w1_pingpong.lua 20000" },
  { "w4", "w4_fanin.lua 100 100" },
  { "w5", "w5_channel.lua paced 200000" },
}

-- One run: ops per CPU second.
local function run(v, prog)
  local cmd = ("LUA_PATH=%s LUA_CPATH=%s lua5.3 -e %s %s/bench/cosock/%s"):format(
    q(v.root .. "/lua/?.lua;" .. v.root .. "/lua/?/init.lua;;"),
    q(v.root .. "/build/src/cpath/?.so;;"), q(v.prelude), q(here), prog)
  local f = io.popen(cmd)
  local out = f:read("a")
  f:close()
  local ops, cpu = out:match("ops=(%S+)"), out:match("cpu=(%S+)")
  if not ops then error(v.name .. ": " .. out) end
  return tonumber(ops) / tonumber(cpu)
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

for _, w in ipairs(WORKLOADS) do
  local rates, ratios = {}, {}
  for _, v in ipairs(variants) do rates[v.name], ratios[v.name] = {}, {} end
  for r = 1, rounds do
    local got = {}
    for k = 0, #variants - 1 do
      local v = variants[(r + k) % #variants + 1]
      got[v.name] = run(v, w[2])
      table.insert(rates[v.name], got[v.name])
    end
    for _, v in ipairs(variants) do
      table.insert(ratios[v.name], got[v.name] / got[variants[1].name])
    end
  end
  local line = { w[1] }
  for _, v in ipairs(variants) do
    line[#line + 1] = ("%s %.0f/s (%.4fx)"):format(v.name, median(rates[v.name]), median(ratios[v.name]))
  end
  print(table.concat(line, "  "))
end
