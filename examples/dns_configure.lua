-- dns_configure.lua: telling the resolver where to ask and how long to wait.
--
-- Shows: cosock.socket.dns.configure{servers =, timeout =, tries =} pointed at
-- a "DNS server" of this program's own on 127.0.0.1 that never answers (a task
-- reading queries and dropping them), so that lookups fail after the timeout
-- and tries given, without any network; the error strings (LuaSocket's) that
-- toip and getaddrinfo then give; /etc/hosts still answering localhost; a
-- socket timeout ending a connect's lookup first; the bad-argument errors of
-- configure and setservers; dns.setservers(nil) going back to the system's
-- servers, and configure{} resetting the timing too. See doc/dns.md and
-- doc/reference.md (cosock.socket.dns).
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh dns_configure
-- With c-ares built in it prints, in this order (in about half a second):
--   resolver: c-ares
--   configure: true
--   toip: nil Host name lookup failure
--   getaddrinfo: nil temporary failure in name resolution
--   localhost (from /etc/hosts): 127.0.0.1
--   connect with a 50 ms timeout: nil timeout
--   configure{tries = 0}: bad argument #1 to 'configure' (tries: integer from 1 to 100 expected, got 0)
--   setservers{"dns.example"}: bad argument #1 to 'setservers' (entry 1: numeric address expected, got 'dns.example')
--   setservers(nil): true
--   configure{}: true
--   run() returned
-- Built without c-ares it prints "resolver: luasocket", then "configure: nil
-- cosock-native was built without c-ares: ..." and "run() returned".

local cosock = require "cosock"
local socket = cosock.socket
local dns = socket.dns

local function show(label, ...)
  local out = { label }
  for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
  print(table.concat(out, " "))
end

print("resolver: " .. dns.resolver)

cosock.spawn(function()
  -- A server that takes every query and answers none.
  local silent = assert(socket.udp())
  assert(silent:setsockname("127.0.0.1", 0))
  local _, port = silent:getsockname()
  local server = cosock.spawn(function()
    while silent:receivefrom() do end -- until cancelled below
  end, "silent server")

  -- 0.1 s for the first try, 0.2 s for the second (each round waits twice
  -- as long as the one before), then the lookup fails.
  local ok, err = dns.configure { servers = { "127.0.0.1:" .. port }, timeout = 0.1, tries = 2 }
  if ok then print("configure: true") else show("configure:", ok, err) end
  if ok then
    show("toip:", dns.toip("nothing.example.test"))
    local list, gerr = dns.getaddrinfo("nothing.example.test")
    show("getaddrinfo:", list, gerr)
    show("localhost (from /etc/hosts):", (dns.toip("localhost")))

    local tcp = socket.tcp()
    tcp:settimeout(0.05) -- limits the lookup too
    show("connect with a 50 ms timeout:", tcp:connect("nothing.example.test", 80))
    tcp:close()

    local _, e = pcall(dns.configure, { tries = 0 })
    print("configure{tries = 0}: " .. e)
    _, e = pcall(dns.setservers, { "dns.example" })
    print('setservers{"dns.example"}: ' .. e)
    show("setservers(nil):", dns.setservers(nil))
    -- setservers keeps configure's timeout and tries; configure{} resets all.
    show("configure{}:", dns.configure {})
  end
  -- (closing the socket does not wake the server's task, as on cosock)
  silent:close()
  server:cancel()
end, "main")

cosock.run()
print("run() returned")
