-- needs: lua-websockets (--websockets DIR: a checkout of lipp/lua-websockets)
-- lua-websockets' copas server (websocket.server.copas) and copas client
-- (websocket.client.copas), unchanged: CLIENTS clients each send MESSAGES
-- text messages to an echo server and read them back, then close; the
-- server is closed once every client is done. Prints what came back, sorted
-- (the threads interleave differently from one run to the next).
local copas = require "copas"
local websocket = require "websocket"

local PORT = tonumber(os.getenv("CC_PORT")) or 48790
local CLIENTS, MESSAGES = 4, 5

local server = websocket.server.copas.listen {
  interface = "127.0.0.1",
  port = PORT,
  protocols = {
    echo = function(ws)
      while true do
        local message = ws:receive()
        if not message then
          ws:close()
          return
        end
        ws:send("echo: " .. message)
      end
    end,
  },
}

local lines, done = {}, 0
for c = 1, CLIENTS do
  copas.addthread(function()
    local ws = websocket.client.copas({ timeout = 5 })
    local ok, err = ws:connect("ws://127.0.0.1:" .. PORT .. "/", "echo")
    if not ok then
      lines[#lines + 1] = ("client %d: connect failed: %s"):format(c, tostring(err))
    else
      for i = 1, MESSAGES do
        assert(ws:send(("client %d message %d"):format(c, i)))
        local reply = ws:receive()
        lines[#lines + 1] = ("client %d got %s"):format(c, tostring(reply))
      end
      local was_clean, code = ws:close()
      lines[#lines + 1] = ("client %d closed: %s %s"):format(c, tostring(was_clean), tostring(code))
    end
    done = done + 1
    if done == CLIENTS then server:close() end
  end)
end

copas.loop()
table.sort(lines)
for _, l in ipairs(lines) do print(l) end
print("loop ended")
