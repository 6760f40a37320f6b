-- dns_lookup.lua: name lookups that do not block the loop.
--
-- Shows: cosock.socket.dns.toip / getaddrinfo in tasks, /etc/hosts (localhost),
-- dns.setservers pointing the resolver at a DNS server of our own (a small one,
-- a task of this program on 127.0.0.1), other tasks running while an answer is
-- late, socket.connect to a host name, a socket timeout ending a slow lookup,
-- and LuaSocket's error string for an unknown name.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh dns_lookup
-- With c-ares built in it prints, in this order:
--   resolver: c-ares
--   localhost -> 127.0.0.1 (from /etc/hosts)
--   echo.example.test -> inet 127.0.0.1
--   tick 1
--   tick 2
--   tick 3
--   slow.example.test -> 127.0.0.1 (answered after 3 ticks of another task)
--   connected to echo.example.test: HELLO
--   with a 50 ms timeout: nil timeout
--   nosuch.example.test: nil host or service not provided, or not known
-- Built without c-ares it prints "resolver: luasocket (lookups block the
-- loop)" and the localhost line only.

local cosock = require "cosock"
local socket, dns = cosock.socket, cosock.socket.dns

print("resolver: " .. dns.resolver .. (dns.resolver == "c-ares" and "" or " (lookups block the loop)"))

---------------------------------------------------------------------------
-- A tiny DNS server: A records (127.0.0.1) for the names in `zone`, NXDOMAIN
-- for the others. The answers to a name marked "held" wait until release(name).
-- Big-endian 16-bit fields, in plain arithmetic (every Lua version).
local function u16(s, i) local hi, lo = s:byte(i, i + 1) return hi * 256 + lo end
local function be16(n) return string.char(math.floor(n / 256) % 256, n % 256) end

local function dns_server(zone)
  local udp = assert(socket.udp())
  assert(udp:setsockname("127.0.0.1", 0))
  local held = {}
  local task = cosock.spawn(function()
    while true do
      local q, ip, port = udp:receivefrom()
      if not q then break end
      local pos, labels = 13, {}
      while q:byte(pos) > 0 do
        labels[#labels + 1] = q:sub(pos + 1, pos + q:byte(pos))
        pos = pos + q:byte(pos) + 1
      end
      local name, qtype = table.concat(labels, "."):lower(), u16(q, pos + 1)
      local rule = zone[name]
      -- one A record 127.0.0.1 (TTL 60) for a name of the zone
      local answer = (rule and qtype == 1)
        and (be16(0xC00C) .. be16(1) .. be16(1) .. "\0\0\0\60" .. be16(4) .. "\127\0\0\1") or ""
      -- a response with recursion desired and available; rcode 3 (NXDOMAIN) outside the zone
      local reply = be16(u16(q, 1)) .. be16(0x8580 + (rule and 0 or 3)) .. be16(1)
        .. be16(#answer > 0 and 1 or 0) .. be16(0) .. be16(0) .. q:sub(13, pos + 4) .. answer
      if rule == "held" then
        held[name] = held[name] or {}
        table.insert(held[name], function() udp:sendto(reply, ip, port) end)
      else
        udp:sendto(reply, ip, port)
      end
    end
  end, "dns server")
  local function release(name)
    for _, send in ipairs(held[name] or {}) do send() end
    held[name] = nil
    zone[name] = true
  end
  -- Stopping it: closing its socket does not wake its task (as on cosock),
  -- so the task is cancelled too.
  local function stop()
    udp:close()
    task:cancel()
  end
  return stop, "127.0.0.1:" .. select(2, udp:getsockname()), release
end

cosock.spawn(function()
  print("localhost -> " .. dns.toip("localhost") .. " (from /etc/hosts)")
  if dns.resolver ~= "c-ares" then return end

  local stop_server, address, release = dns_server {
    ["echo.example.test"] = true, ["slow.example.test"] = "held", ["late.example.test"] = "held",
  }
  assert(dns.setservers { address })

  local addrs = assert(dns.getaddrinfo("echo.example.test"))
  print("echo.example.test -> " .. addrs[1].family .. " " .. addrs[1].addr)

  -- Another task ticks while slow.example.test waits for its answer, and
  -- lets the server answer after the third tick.
  cosock.spawn(function()
    for i = 1, 3 do
      socket.sleep(0.02)
      print("tick " .. i)
    end
    release("slow.example.test")
  end, "ticker")
  print("slow.example.test -> " .. dns.toip("slow.example.test") .. " (answered after 3 ticks of another task)")

  -- An echo server, reached by name.
  local listener = assert(socket.bind("127.0.0.1", 0))
  local port = select(2, listener:getsockname())
  cosock.spawn(function()
    local c = assert(listener:accept())
    c:send(c:receive():upper() .. "\n")
    c:close()
    listener:close()
  end, "echo server")
  local c = assert(socket.connect("echo.example.test", port))
  c:send("hello\n")
  print("connected to echo.example.test: " .. c:receive())
  c:close()

  -- A lookup limited by the socket's timeout (the answer is held back).
  local late = socket.tcp()
  late:settimeout(0.05)
  local ok, err = late:connect("late.example.test", port)
  print("with a 50 ms timeout: " .. tostring(ok) .. " " .. err)
  late:close()
  release("late.example.test")                      -- (the late answer is dropped)

  print("nosuch.example.test: " .. tostring(select(1, dns.toip("nosuch.example.test"))) ..
    " " .. select(2, dns.getaddrinfo("nosuch.example.test")))
  stop_server()
end, "main")

cosock.run()
