-- harness.lua: what every real-client case shares. A case loads it with
--   local H = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/harness.lua")
-- and then:
--   H.use(name, subdir...)  put a checkout's module folders on package.path
--                           (name: edge, luxure, luncheon, neturl, st_edge; the
--                           script passes each checkout in RC_<NAME>); returns
--                           the checkout's root
--   H.prefer(name, subdir...)  as H.use, but before the stubs and cosock's own
--                           path (a real module the stubs stand in for elsewhere)
--   H.say(...)              one transcript line: the values, tab-separated
--   H.first_line(s)         the first line of a message
--   H.listen()              a listening cosock tcp socket on 127.0.0.1, its port
--   H.serve_once(srv, name, fn)  a task that accepts one connection, calls fn(c)
--   H.read_request(c)       the request line and headers a client sent (a table)
--   H.task(name, fn)        cosock.spawn, printing an error fn raises instead of
--                           letting it out of run
--   H.run()                 cosock.run in pcall: "run returned" or "run raised: ..."
--   H.buffer(who)           a say(...) that keeps its lines for H.flush (for tasks
--                           that may print in the same pass, in an order cosock
--                           leaves open); H.flush(who...) prints them, by task
--   H.make_cert(dir)        a self-signed certificate made now with openssl in
--                           dir (made if missing): {key = file, certificate = file}
--   H.redirect_udp(ip, port, to_port)  make the udp sockets cosock.socket.udp
--                           creates from now on send what the code sends to
--                           ip:port (a multicast group) to 127.0.0.1:to_port
--   H.mask_log_ports()     the log stub's lines show "<port>" for the ports the
--                           system picks (after "127.0.0.1 " or an "address:")
--   H.watchdog(s, done, fin)  a task that calls fin() once done() is true, or
--                           after s seconds calls fin(), says so and exits
-- The third-party code is loaded from the checkouts as it is; the stubs in
-- ../stubs stand in for the hub's own modules (log, st.*, ...).

local H = {}

-- Line by line, so that a case killed by the script's time limit still shows
-- how far it got.
io.stdout:setvbuf("line")

local here = arg[0]:match("^(.*)/") or "."

-- Checkout folders go after cosock's own path (LUA_PATH, set by the script), so
-- that a driver's folder named cosock/ (Sonos has one) never hides the library.
package.path = package.path .. ";" .. here .. "/stubs/?.lua;" .. here .. "/stubs/?/init.lua"

function H.use(name, ...)
  local root = os.getenv("RC_" .. name:upper())
  if not root or root == "" then error("no checkout for " .. name .. " (RC_" .. name:upper() .. ")", 0) end
  local dirs = table.pack(...)
  if dirs.n == 0 then dirs = { "", n = 1 } end
  for i = 1, dirs.n do
    local d = root .. (dirs[i] ~= "" and "/" .. dirs[i] or "")
    package.path = package.path .. ";" .. d .. "/?.lua;" .. d .. "/?/init.lua"
  end
  return root
end

function H.prefer(name, ...)
  local saved = package.path
  package.path = ""
  local root = H.use(name, ...)
  package.path = package.path:sub(2) .. ";" .. saved
  return root
end

function H.say(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  print(table.concat(t, "\t", 1, t.n))
end

function H.first_line(s)
  return (tostring(s):match("^[^\n]*"))
end

function H.task(name, fn)
  local cosock = require "cosock"
  return cosock.spawn(function()
    local ok, err = xpcall(fn, debug.traceback)
    if not ok then H.say(name .. " raised: " .. H.first_line(err)) end
  end, name)
end

function H.run()
  local cosock = require "cosock"
  local ok, err = pcall(cosock.run)
  if ok then H.say("run returned") else H.say("run raised: " .. H.first_line(err)) end
end

local buffers = {}
function H.buffer(who)
  buffers[who] = buffers[who] or {}
  return function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    table.insert(buffers[who], table.concat(t, "\t", 1, t.n))
  end
end

function H.flush(...)
  for _, who in ipairs({ ... }) do
    for _, l in ipairs(buffers[who] or {}) do H.say(who .. ": " .. l) end
    buffers[who] = {}
  end
end

-- The program ends itself when the code under test waits for ever (as some
-- does on cosock), so the transcript says where instead of a time-limit kill.
function H.watchdog(seconds, done, fin)
  local cosock = require "cosock"
  return H.task("watchdog", function()
    local t0 = cosock.socket.gettime()
    while not done() do
      if cosock.socket.gettime() - t0 > seconds then
        fin()
        H.say(string.format("watchdog: still waiting after %g s; program ended", seconds))
        os.exit(0)
      end
      cosock.socket.sleep(0.05)
    end
    fin()
  end)
end

-- A fresh key and self-signed certificate (CA:TRUE, so a client may also
-- verify against it as its cafile), made with openssl at run time: nothing
-- secret is kept in the repository.
function H.make_cert(dir)
  os.execute("mkdir -p '" .. dir .. "'")
  local key, cert = dir .. "/key.pem", dir .. "/cert.pem"
  local cmd = string.format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
    .. "-keyout '%s' -out '%s' -days 2 -subj /CN=127.0.0.1 >/dev/null 2>&1", key, cert)
  assert(os.execute(cmd), "openssl could not make a certificate")
  return { key = key, certificate = cert }
end

-- The code under test is not touched: only the sockets it is given send
-- elsewhere.
function H.redirect_udp(ip, port, to_port)
  local socket = require "cosock.socket"
  local udp = socket.udp
  socket.udp = function(...)
    local s, err = udp(...)
    if s then
      local sendto = s.sendto
      s.sendto = function(self, data, dip, dport)
        if dip == ip and tonumber(dport) == port then dip, dport = "127.0.0.1", to_port end
        return sendto(self, data, dip, dport)
      end
    end
    return s, err
  end
end

-- For libraries that log the ports they were given or picked.
function H.mask_log_ports()
  local log = require "log"
  for _, level in ipairs({ "trace", "debug", "info", "warn", "error" }) do
    local emit = log[level]
    log[level] = function(...)
      local t = table.pack(...)
      for i = t.n, 1, -1 do
        if t[i - 1] == "127.0.0.1" and tostring(t[i]):match("^%d+$") then
          t[i] = "<port>"
        elseif type(t[i]) == "string" then
          t[i] = t[i]:gsub("(%d+%.%d+%.%d+%.%d+):%d+", "%1:<port>"):gsub("127%.0%.0%.1 %d+", "127.0.0.1 <port>")
        end
      end
      return emit(table.unpack(t, 1, t.n))
    end
  end
end

function H.listen()
  local socket = require "cosock.socket"
  local srv = assert(socket.tcp())
  assert(srv:bind("127.0.0.1", 0))
  assert(srv:listen(8))
  local _, port = srv:getsockname()
  return srv, tonumber(port)
end

function H.read_request(c)
  local req = { headers = {} }
  req.line = c:receive("*l")
  while true do
    local l, err = c:receive("*l")
    if not l or l == "" then req.err = err; break end
    local k, v = l:match("^([^:]+):%s*(.*)$")
    if k then req.headers[k:lower()] = v end
  end
  local n = tonumber(req.headers["content-length"] or "")
  if n and n > 0 then req.body = c:receive(n) end
  return req
end

function H.serve_once(srv, name, fn)
  return H.task(name, function()
    local c = assert(srv:accept())
    fn(c)
  end)
end

return H
