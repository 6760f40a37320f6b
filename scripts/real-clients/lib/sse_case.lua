-- sse_case.lua: the lunchbox EventSource client (a driver's
-- src/lunchbox/sse/eventsource.lua, unchanged) against a local event-stream
-- server. The server sends three events in chunked encoding and keeps the
-- connection open; after the third event the driver code calls close() while
-- the EventSource's task waits in receive("*l"), as a driver does when a
-- bridge is removed. The server then reads until the client's close reaches it.
--   dofile(lib .. "/sse_case.lua")(H, "drivers/SmartThings/philips-hue/src")
-- A copy whose EventSource.new takes a request body before the socket builder
-- (ABB's: new(url, headers, body, builder), a POST) passes a third argument,
-- true.

return function(H, driver_src, body_before_builder)
  H.use("edge", driver_src)
  H.use("neturl", "lib")
  H.use("luncheon")
  local cosock = require "cosock"
  local EventSource = require "lunchbox.sse.eventsource"

  local srv, port = H.listen()
  local got_tx, got_rx = cosock.channel.new()

  H.serve_once(srv, "sse server", function(c)
    local req = H.read_request(c)
    H.say("server: request", req.line, "accept=" .. tostring(req.headers.accept), req.body)
    assert(c:send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
      .. "Transfer-Encoding: chunked\r\n\r\n"))
    for i = 1, 3 do
      local ev = string.format("id: %d\nevent: update\ndata: {\"n\":%d}\n\n", i, i)
      assert(c:send(string.format("%x\r\n%s\r\n", #ev, ev)))
    end
    H.say("server: sent 3 events, waiting for the client to go")
    c:settimeout(10)
    H.say("server: receive", c:receive("*a"))
    c:close()
  end)

  H.task("client", function()
    -- A socket builder as the drivers pass one (the Hue driver's sets up TLS);
    -- its 2 s timeout keeps cosock's wait after close() short.
    local function builder()
      local s = assert(cosock.socket.tcp())
      assert(s:settimeout(2))
      assert(s:connect("127.0.0.1", port))
      return s
    end
    local url = string.format("http://127.0.0.1:%d/eventstream/clip/v2", port)
    local headers = { ["hue-application-key"] = "k" }
    local es
    if body_before_builder then
      es = EventSource.new(url, headers, nil, builder)
    else
      es = EventSource.new(url, headers, builder)
    end
    es.onopen = function() H.say("client: onopen, ready_state", es.ready_state) end
    es.onmessage = function(ev)
      H.say("client: onmessage", ev.type, ev.lastEventId, (ev.data:gsub("\n", "\\n")))
      got_tx:send(ev.lastEventId)
    end
    es.onerror = function() H.say("client: onerror") end
    for _ = 1, 3 do got_rx:receive() end
    H.say("client: close() while the source waits in receive")
    es:close()
    H.say("client: closed, ready_state", es.ready_state)
  end)

  H.run()
end
