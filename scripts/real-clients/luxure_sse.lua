-- luxure_sse: cosock/luxure's server-sent events (luxure/sse.lua, with the
-- server, unchanged). A route wraps its response in an Sse handle: the
-- headers are sent, the connection is held open, and a task of luxure's
-- selects over the handle's channel receiver and the client's socket with the
-- keep-alive timeout (0.3 s here), sending each event given to sse:send and
-- an empty comment at each timeout, and it looks only at the first object
-- select lists. The client (written here) reads the stream line by line.
-- /events: the route does not read the request's headers, so they wait in
-- LuaSocket's buffer and the socket is ready at once; the first event, sent
-- in the pass the task first selects, still goes out first (cosock lists the
-- channel before a socket with buffered data), then the task reads the
-- socket, logs "recv" and closes the stream. /events2: the route reads the
-- headers; two events, a keep-alive comment, a third event, then the client
-- hangs up and the task sees it. Last, a stream whose client hangs up while
-- luxure's task waits with no keep-alive at all. sse:send after each end.
-- needs: luxure luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
H.use("luxure")
H.use("luncheon")
H.use("neturl", "lib")
local cosock = require "cosock"
local lux = require "luxure"
local sse_mod = require "luxure.sse"
local Sse, Event = sse_mod.Sse, sse_mod.Event

local handles = {}
local server = lux.Server.new(lux.Opts.new():set_env("production"))
server:get("/events", function(_, res) handles[#handles + 1] = Sse.new(res, 0.3) end)
server:get("/events2", function(req, res)
  req:get_headers()
  handles[#handles + 1] = Sse.new(res, 0.3)
end)
server:get("/quiet", function(req, res)
  req:get_headers()
  handles[#handles + 1] = Sse.new(res, false)
end)
server:set_ip("127.0.0.1"):listen(0)
local port = server.port
local served = 0
H.task("luxure", function()
  server:_run(function(err) H.say("server error callback", err) end, function()
    served = served + 1
    return served <= 3
  end)
end)

local function open(path)
  local c = assert(cosock.socket.tcp())
  c:settimeout(3)
  assert(c:connect("127.0.0.1", port))
  assert(c:send("GET " .. path .. " HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"))
  local status = c:receive("*l")
  local headers = {}
  while true do
    local l = assert(c:receive("*l"))
    if l == "" then break end
    headers[#headers + 1] = l:lower()
  end
  table.sort(headers)
  H.say("client: " .. path, status, table.concat(headers, "; "))
  return c
end

-- One event: its lines up to the blank line that ends it.
local function read_event(c)
  local lines = {}
  while true do
    local l, err = c:receive("*l")
    if not l then return "error " .. tostring(err) end
    if l == "" then return table.concat(lines, " | ") end
    lines[#lines + 1] = l
  end
end

H.task("client", function()
  local c = open("/events")
  while #handles < 1 do cosock.socket.sleep(0.01) end
  local sse = handles[1]
  H.say("send 1", sse:send(Event.new():event("update"):id(1):data("one")))
  H.say("client: event", read_event(c))
  H.say("send 2", sse:send(Event.new():event("update"):id(2):data("two\nlines")))
  H.say("client: event", read_event(c))
  H.say("client: keep-alive", read_event(c))
  H.say("send 3", sse:send(Event.new():data("three")))
  H.say("client: event", read_event(c))
  c:close()
  cosock.socket.sleep(0.1)
  H.say("send after the hang-up", sse:send(Event.new():data("four")))

  c = open("/events2")
  while #handles < 2 do cosock.socket.sleep(0.01) end
  sse = handles[2]
  H.say("send 1", sse:send(Event.new():event("update"):id(1):data("one")))
  H.say("client: event", read_event(c))
  H.say("send 2", sse:send(Event.new():event("update"):id(2):data("two\nlines")))
  H.say("client: event", read_event(c))
  H.say("client: keep-alive", read_event(c))
  H.say("send 3", sse:send(Event.new():data("three")))
  H.say("client: event", read_event(c))
  c:close()
  cosock.socket.sleep(0.1)
  H.say("send after the hang-up", sse:send(Event.new():data("four")))

  local q = open("/quiet")
  while #handles < 3 do cosock.socket.sleep(0.01) end
  q:close()
  cosock.socket.sleep(0.1)
  H.say("quiet send after the hang-up", handles[3]:send(Event.new():data("x")))
end)
H.run()
