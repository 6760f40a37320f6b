#!/usr/bin/env lua5.3
-- W4 next to its floor: N interleaved rounds of the C program, the floor
-- program (plain and with coroutines), cosock-native and cqueues, each at 100
-- clients x 100 requests; prints each one's median rate and its median ratio
-- to the C program of the same round (pairing absorbs the host's slow
-- phases). Build first (scripts/build.sh); cqueues is skipped when missing.
-- Usage: bench/floor/w4_rounds.lua [ROUNDS]   (default 9; run from anywhere)
local here = (arg[0]:match("^(.*)/") or ".")
local bench = here .. "/.."
local repo = bench .. "/.."
local ROUNDS = tonumber(arg[1]) or 9
local env = ("LUA_PATH='%s/lua/?.lua;;' LUA_CPATH='%s/build/src/cpath/?.so;;' "):format(repo, repo)

local function sh(cmd)
  local f = io.popen(cmd .. " 2>&1")
  local out = f:read("a")
  f:close()
  return out
end

local cbin = os.tmpname()
local built = sh(("cc -O2 -o %s %s/c/epoll_fanin.c && echo ok"):format(cbin, bench))
if not built:match("ok") then io.stderr:write("cannot build the C program: ", built); os.exit(1) end

local programs = {
  { "C epoll", cbin .. " 100 100" },
  { "LuaSocket, no runtime", env .. "lua5.3 " .. bench .. "/floor/w4_plain.lua 100" },
  { "the same with coroutines", env .. "lua5.3 " .. bench .. "/floor/w4_plain.lua 100 coroutines" },
  { "cosock-native", env .. "lua5.3 " .. bench .. "/cosock/w4_fanin.lua 100 100" },
}
if sh("lua5.3 -e 'require \"cqueues\"' && echo ok"):match("ok") then
  programs[#programs + 1] = { "cqueues", env .. "lua5.3 " .. bench .. "/cqueues/w4_fanin.lua 100 100" }
end

local rates = {}
for round = 1, ROUNDS do
  for i, p in ipairs(programs) do
    local out = sh(p[2])
    local rate = tonumber(out:match("^RESULT .- rate=([%d.]+)"))
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

print(("%-28s %12s %12s"):format("program", "median /s", "/ C paired"))
for i, p in ipairs(programs) do
  local ratios = {}
  for r = 1, ROUNDS do ratios[r] = rates[i][r] / rates[1][r] end
  print(("%-28s %11.1fk %12.2f"):format(p[1], median(rates[i]) / 1000, median(ratios)))
end
