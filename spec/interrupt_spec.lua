-- Ctrl-C (SIGINT) and SIGTERM while cosock.run waits: doc/reference.md,
-- "cosock.run", "Signals". Each case runs a small program in a child Lua
-- process (the interpreter's own SIGINT handler is lua.c's) and sends it the
-- signal once it is inside run. The waits in the child are long (WAIT
-- seconds) and end by themselves: a signal that does not interrupt shows as
-- a run that returned true, never as a hang. Nothing asserts a duration.

local interpreter = require "spec.support.interpreter"
local V = require "spec.support.version"

local WAIT = 3 -- seconds each child's wait lasts when nothing interrupts it

-- Runs source (after the specs' package paths) in a child; once it printed
-- "ready" (at most 10 s), plus a moment to reach its wait, sends it signal.
-- Returns what the child printed and the shell's exit status of the child.
local function run_and_signal(source, signal, env)
  local script, out = os.tmpname(), os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath),
          "io.stdout:setvbuf('line')\n", source)
  f:close()
  local sh = table.concat({
    "exec 2>/dev/null", -- (the shell's own "Terminated")
    (env or "") .. " " .. interpreter .. " " .. script .. " > " .. out .. " 2>&1 & pid=$!",
    "n=0; until grep -q '^ready' " .. out .. " || [ $n -ge 200 ]; do sleep 0.05; n=$((n + 1)); done",
    "sleep 0.2",
    "kill -" .. signal .. " $pid",
    "wait $pid; echo \"status $?\"",
  }, "\n")
  local p = io.popen(sh)
  local status = p:read("*a"):match("status (%d+)")
  p:close()
  local g = assert(io.open(out))
  local printed = g:read("*a")
  g:close()
  os.remove(script)
  os.remove(out)
  return printed, tonumber(status)
end

-- The child's part after its tasks are spawned: a task prints "ready" from
-- inside run; run is called under pcall and what it raised is printed, then
-- what is left, then (with AGAIN) a second run that finishes the work.
local RUN = [[
cosock.spawn(function() print("ready") end, "ready")
local ok, err = pcall(cosock.run)
print("run: " .. tostring(ok) .. " " .. tostring(err))
print("tasks left: " .. cosock.stats().tasks)
if AGAIN then
  local ok2, err2 = pcall(cosock.run)
  print("again: " .. tostring(ok2) .. " " .. tostring(err2) .. " " .. tostring(finished))
end
]]

local function program(body, again)
  return "local cosock = require 'cosock'\nlocal AGAIN = " .. tostring(again) ..
    "\nlocal finished\n" .. body .. "\n" .. RUN
end

local WAITS = {
  sleep = "cosock.spawn(function() cosock.socket.sleep(WAIT) finished = 'slept' end, 'sleeper')",
  accept = [[
local srv = assert(cosock.socket.bind("127.0.0.1", 0))
cosock.spawn(function()
  srv:settimeout(WAIT)
  finished = select(2, srv:accept())
end, 'acceptor')]],
  channel = [[
local tx, rx = cosock.channel.new()
cosock.spawn(function()
  rx:settimeout(WAIT)
  finished = select(2, rx:receive())
end, 'receiver')]],
  -- a lookup through c-ares, sent to a server that never answers
  lookup = [[
local silent = assert(require("socket").udp())
assert(silent:setsockname("127.0.0.1", 0))
local _, port = silent:getsockname()
cosock.socket.dns.configure { servers = { "127.0.0.1:" .. port }, timeout = WAIT, tries = 1 }
cosock.spawn(function()
  finished = select(2, cosock.socket.dns.toip("interrupt.invalid"))
end, 'looker')]],
  -- tasks always ready: the loop never waits
  busy = [[
local t0 = require("cosock.core").monotime()
for i = 1, 2 do
  cosock.spawn(function()
    repeat cosock.socket.sleep(0) until require("cosock.core").monotime() - t0 > WAIT
    finished = 'spun'
  end, 'spinner ' .. i)
end]],
}

-- Did the child's first run raise Lua's "interrupted!"? LuaJIT puts the
-- position of the Lua code its hook stopped in front (the loop's own, or on
-- LuaJIT, whose hooks every coroutine shares, a task's: then it is that
-- task's error, traceback and all).
local function assert_interrupted(out)
  if V.jit then
    assert.matches("\nrun: false [^\n]*interrupted!\n", out)
  else
    assert.matches("\nrun: false interrupted!\n", out, 1, true)
  end
end

describe("SIGINT (Ctrl-C) while run", function()
  local cases = { "sleep", "accept", "channel", "busy" }
  -- (a build without c-ares looks names up with LuaSocket, blocking)
  if require("cosock.core").dns ~= "luasocket" then cases[#cases + 1] = "lookup" end
  for _, name in ipairs(cases) do
    it("waits in " .. name .. ": run raises Lua's 'interrupted!' and every task is still there", function()
      local out = run_and_signal(program((WAITS[name]:gsub("WAIT", WAIT)), false), "INT")
      assert_interrupted(out)
      if not (V.jit and name == "busy") then -- (LuaJIT: see assert_interrupted)
        assert.matches("\ntasks left: " .. (name == "busy" and 2 or 1) .. "\n", out, 1, true)
      end
    end)
  end

  it("a later run goes on with the wait and finishes it", function()
    local out = run_and_signal(program((WAITS.sleep:gsub("WAIT", WAIT)), true), "INT")
    assert_interrupted(out)
    assert.matches("\nagain: true nil slept\n", out, 1, true)
  end)

  it("with the select poller too", function()
    local out = run_and_signal(program((WAITS.accept:gsub("WAIT", WAIT)), false), "INT",
                               "COSOCK_POLLER=select")
    assert_interrupted(out)
  end)
end)

describe("a wait on a socket another task closed, with no timeout", function()
  -- cosock hands the closed socket to LuaSocket's select, which skips it and
  -- blocks for ever; so does the loop (no stall error), and Ctrl-C ends it.
  -- (The child runs under timeout(1) --foreground, which passes SIGINT on
  -- to it alone, so that a loop that did not block cannot hang the suite
  -- either. Without --foreground timeout sends the signal to its whole
  -- process group, so the child got it twice, and lua.c's handler ends the
  -- process on a second SIGINT that comes before its hook ran.)
  it("blocks as cosock does, and SIGINT raises 'interrupted!' out of run", function()
    local body = [[
local u = assert(cosock.socket.udp())
assert(u:setsockname("127.0.0.1", 0))
cosock.spawn(function()
  u:settimeout(nil)
  finished = select(2, u:receive())
end, 'reader')
cosock.spawn(function() cosock.socket.sleep(0.01) u:close() end, 'closer')]]
    local out = run_and_signal(program(body, false), "INT", "timeout --foreground 30")
    assert_interrupted(out)
    assert.matches("\ntasks left: 1\n", out, 1, true)
  end)
end)

describe("SIGTERM while run", function()
  it("with no handler of the program's ends the process, as with plain Lua", function()
    local out, status = run_and_signal(program((WAITS.sleep:gsub("WAIT", WAIT)), false), "TERM")
    assert.equal(128 + 15, status)
    assert.is_nil(out:find("run: ", 1, true))
  end)
end)
