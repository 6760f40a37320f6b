-- examples/service.lua and examples/many_cores.lua in a child process (LUA_PATH/LUA_CPATH of the
-- build): it answers, says "reload" on SIGHUP, and on SIGTERM finishes the
-- request in flight, closes the connection and stops (cosock.stop) so that
-- run returns. Every socket wait has a limit, and timeout(1) bounds the child.

local rawsocket = require "socket"

local function start(script)
  local lua = require "spec.support.interpreter"
  local cmd = ("LUA_PATH=%q LUA_CPATH=%q timeout 30 sh -c 'echo $$; exec %s %s' 2>&1")
    :format(package.path, package.cpath, lua, script)
  local p = io.popen(cmd)
  local pid = assert(p:read("*l"):match("^(%d+)$"))
  return p, pid
end

describe("examples/service.lua", function()
  it("answers, reloads on HUP, drains the request in flight on TERM and stops", function()
    local p, pid = start("examples/service.lua")
    local port = assert(tonumber(p:read("*l"):match("^listening (%d+)$")))
    local c = assert(rawsocket.connect("127.0.0.1", port))
    c:settimeout(10)
    assert(c:send("hello\n"))
    assert.equal("hello", c:receive("*l"))
    assert(os.execute("kill -HUP " .. pid))
    assert.equal("reload", p:read("*l"))
    assert(c:send("slow\n"))                     -- in flight when TERM comes
    assert(os.execute("kill -TERM " .. pid))
    assert.equal("draining 1", p:read("*l"))
    assert.equal("acceptor ended: true", p:read("*l"))  -- under the default settings
    local refused = rawsocket.tcp()
    refused:settimeout(10)
    assert.same({ nil, "connection refused" }, { refused:connect("127.0.0.1", port) }) -- the listener is closed
    refused:close()
    assert.equal("slow", c:receive("*l"))        -- answered all the same
    local line, err = c:receive("*l")
    assert.same({ nil, "closed" }, { line, err })
    assert.equal("stopped: 1 drained, 0 cancelled", p:read("*l"))
    assert.is_nil(p:read("*l"))                  -- run returned: the process ended
    c:close()
    p:close()
  end)

  it("many_cores: two workers share a port with SO_REUSEPORT, both answer, both stop on TERM", function()
    local p = start("examples/many_cores.lua 2")
    local lines = {}
    for line in p:lines() do lines[#lines + 1] = line end
    p:close()
    assert.same({
      "2 workers listening on one port",
      "40 connections answered by 2 workers",   -- (all 40 on one worker: odds 2^-39)
      "every worker stopped on SIGTERM; connections served: 40",
    }, lines)
  end)
end)
