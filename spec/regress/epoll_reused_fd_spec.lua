-- Regression: with the epoll poller, a server that closed a connection and
-- parked on the next accepted one (which got the same fd number) in the same
-- pass was never woken: the loop believed the number was still registered,
-- while the kernel had dropped it on close.
local cosock = require "cosock"
local core = require "cosock.core"
local socket = cosock.socket

describe("regress: a reused fd number", function()
  for _, backend in ipairs({ "select", "epoll" }) do
    it("is polled for the next connection (" .. backend .. ")", function()
      cosock.reset()
      local start = core.stats().backend
      core.set_backend(backend)
      local N, served, answered = 3, 0, 0
      local server = assert(socket.bind("127.0.0.1", 0, 64))
      local _, port = server:getsockname()
      cosock.spawn(function()
        for _ = 1, N do
          local c = assert(server:accept())
          c:settimeout(5)
          local line = assert(c:receive("*l")) -- parks on the reused fd
          assert(c:send(line .. "\n"))
          c:close()                              -- the next accept reuses the number
          served = served + 1
        end
        server:close()
      end, "server")
      for i = 1, N do
        cosock.spawn(function()
          local c = assert(socket.connect("127.0.0.1", tonumber(port)))
          c:settimeout(5)
          socket.sleep(0.02 * i) -- send only once the server has parked
          assert(c:send("hello " .. i .. "\n"))
          assert.equal("hello " .. i, c:receive("*l"))
          answered = answered + 1
          c:close()
        end, "client " .. i)
      end
      local ok, err = pcall(cosock.run)
      core.set_backend(start)
      cosock.reset()
      assert(ok, err)
      assert.equal(N, served)
      assert.equal(N, answered)
    end)
  end
end)
