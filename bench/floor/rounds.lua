#!/usr/bin/env lua5.3
-- A socket workload next to its floor: N interleaved rounds of the C
-- program, the floor programs (LuaSocket driven from plain Lua, and from
-- coroutines resumed by hand: no runtime, nothing waits, nothing is polled),
-- cosock-native and cqueues; prints each one's median rate and its median
-- ratio to the C program of the same round (pairing absorbs the host's slow
-- phases). Build first (scripts/build.sh); cqueues is skipped when missing.
-- Usage: bench/floor/rounds.lua [WORKLOAD] [ROUNDS]   (w1, w4, w6 or churn;
--   default w4 9; run from anywhere)
local here = (arg[0]:match("^(.*)/") or ".")
local bench = here .. "/.."
local repo = bench .. "/.."
local WORKLOAD = arg[1] or "w4"
local ROUNDS = tonumber(arg[2]) or 9
local env = ("ulimit -n 4096 2>/dev/null; LUA_PATH='%s/lua/?.lua;;' LUA_CPATH='%s/build/src/cpath/?.so;;' ")
  :format(repo, repo)
local lua = env .. "lua5.3 " .. bench .. "/"

-- Per workload: the C source and its arguments, the floor programs (under
-- bench/floor/, plain and with coroutines), then cosock-native's and
-- cqueues' program (the same file name under bench/cosock/, bench/cqueues/).
local function rows(floor, floor_co, prog)
  local t = { { "LuaSocket, no runtime", "floor/" .. floor } }
  if floor_co then t[#t + 1] = { "the same with coroutines", "floor/" .. floor_co } end
  t[#t + 1] = { "cosock-native", "cosock/" .. prog }
  t[#t + 1] = { "cqueues", "cqueues/" .. prog }
  return t
end
local workloads = {
  w1 = { "epoll_pingpong", "20000",
    rows("w1_plain.lua 20000", "w1_plain.lua 20000 coroutines", "w1_pingpong.lua 20000") },
  w4 = { "epoll_fanin", "100 100",
    rows("w4_plain.lua 100", "w4_plain.lua 100 coroutines", "w4_fanin.lua 100 100") },
  w6 = { "epoll_many", "1500 10 one",
    rows("w4_plain.lua 10 plain 1500", "w4_plain.lua 10 coroutines 1500",
         "w6_many_sockets.lua 1500 10 one") },
  churn = { "epoll_churn", "10000", rows("churn_plain.lua 10000", nil, "churn.lua 10000") },
}
local w = workloads[WORKLOAD]
if not w then io.stderr:write("usage: rounds.lua [w1|w4|w6|churn] [ROUNDS]\n"); os.exit(2) end

local function sh(cmd)
  local f = io.popen(cmd .. " 2>&1")
  local out = f:read("a")
  f:close()
  return out
end

local cbin = os.tmpname()
local built = sh(("cc -O2 -o %s %s/c/%s.c && echo ok"):format(cbin, bench, w[1]))
if not built:match("ok") then io.stderr:write("cannot build the C program: ", built); os.exit(1) end

local programs = { { "C epoll", env .. cbin .. " " .. w[2] } }
local has_cq = sh("lua5.3 -e 'require \"cqueues\"' && echo ok"):match("ok")
for _, p in ipairs(w[3]) do
  if p[1] ~= "cqueues" or has_cq then programs[#programs + 1] = { p[1], lua .. p[2] } end
end

local rates = {}
for round = 1, ROUNDS do
  for i, p in ipairs(programs) do
    local out = sh(p[2])
    local rate = tonumber(out:match("RESULT .- rate=([%d.]+)"))
    if not rate then
      io.stderr:write(p[1], " failed: ", out)
      os.remove(cbin)
      os.exit(1)
    end
    rates[i] = rates[i] or {}
    rates[i][round] = rate
  end
  io.stderr:write("round ", round, "/", ROUNDS, "\n")
end
os.remove(cbin)

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

print(("%s, %d rounds"):format(WORKLOAD, ROUNDS))
print(("%-28s %12s %12s"):format("program", "median /s", "/ C paired"))
for i, p in ipairs(programs) do
  local ratios = {}
  for r = 1, ROUNDS do ratios[r] = rates[i][r] / rates[1][r] end
  print(("%-28s %11.1fk %12.2f"):format(p[1], median(rates[i]) / 1000, median(ratios)))
end
