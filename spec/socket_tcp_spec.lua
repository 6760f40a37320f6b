-- cosock.socket.tcp wrappers: LuaSocket's tcp API where every call that would
-- block yields to the loop. Real sockets on 127.0.0.1 (ephemeral ports); every
-- wait has a time limit (net.TIMEOUT), so a bug fails instead of hanging.

local cosock = require "cosock"
local luasocket = require "socket"
local core = require "cosock.core"
local net = require "spec.support.net"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local socket = cosock.socket
local pack = net.pack

describe("cosock.socket.tcp", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("wrapper shape", function()
    it("is a callable method table that makes plain-table wrappers", function()
      assert.equal("table", type(socket.tcp))
      local w = socket.tcp()
      assert.equal("table", type(w))
      assert.equal("tcp{master}", w.class)
      assert.equal("userdata", type(w.inner_sock))
      assert.equal("tcp{master}", w.inner_sock.class)
      assert.is_true(rawequal(getmetatable(w).__index, socket.tcp))
      for _, name in ipairs { "accept", "bind", "close", "connect", "dirty", "getfamily",
        "getfd", "getoption", "getpeername", "getsockname", "getstats", "listen",
        "receive", "send", "setfd", "setoption", "setstats", "settimeout", "class",
        "setwaker", "_wake" } do
        assert.equal("function", type(socket.tcp[name]), name)
      end
      w:close()
    end)

    it("settimeout stores the timeout and returns 1.0", function()
      local w = socket.tcp()
      assert.equal(1.0, w:settimeout(0.25))
      assert.equal(0.25, w.timeout)
      assert.equal(1.0, w:settimeout(nil))
      assert.is_nil(w.timeout)
      assert.matches("bad argument #1 to 'settimeout' (number expected, got table)",
        net.error_of(function() w:settimeout({}) end), 1, true)
      w:close()
    end)

    it("keeps the inner socket non-blocking: a call with nothing to do never blocks the process", function()
      local w = socket.tcp()
      assert(w:bind("127.0.0.1", 0))
      assert(w:listen())
      -- straight on the inner object, outside any task: must not block
      assert.same({ nil, "timeout" }, { w.inner_sock:accept() })
      w:close()
    end)

    it("class follows the inner socket: master, server, client", function()
      local classes = {}
      cosock.spawn(function()
        local srv = socket.tcp()
        classes.master = srv.class
        assert.equal(1, srv:bind("127.0.0.1", 0))
        assert(srv:listen(4))
        classes.server = srv.class
        local _, port = srv:getsockname()
        srv:settimeout(net.TIMEOUT)
        local c = socket.tcp()
        c:settimeout(net.TIMEOUT)
        assert.equal(1, c:connect("127.0.0.1", port))
        classes.connected = c.class
        local a = assert(srv:accept())
        classes.accepted = a.class
        classes.accepted_mt = rawequal(getmetatable(a).__index, socket.tcp)
        a:close(); c:close(); srv:close()
      end, "classes")
      net.run()
      assert.same({ master = "tcp{master}", server = "tcp{server}", connected = "tcp{client}",
        accepted = "tcp{client}", accepted_mt = true }, classes)
    end)
  end)

  describe("receive", function()
    it("accumulates a line sent one byte at a time", function()
      local got
      cosock.spawn(function()
        local c, s = net.pair()
        cosock.spawn(function() net.trickle(s, "hello world\nrest") ; s:close() end, "trickler")
        got = pack(c:receive("*l"))
        got.rest = pack(c:receive("*a"))
        c:close()
      end, "reader")
      net.run()
      assert.same({ n = 1, "hello world" }, { n = got.n, got[1] })
      assert.equal("rest", got.rest[1])
    end)

    it("returns a byte count whole when the data is split across many waits", function()
      local data = net.pattern(20000)
      local got
      cosock.spawn(function()
        local c, s = net.pair()
        cosock.spawn(function()
          for i = 1, #data, 997 do
            assert(s:send(data:sub(i, i + 996)))
            socket.sleep(0)
          end
        end, "chunker")
        got = pack(c:receive(#data))
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.equal(1, got.n)
      assert.equal(#data, #got[1])
      assert.is_true(data == got[1])
    end)

    it("counts the prefix in a byte count, like LuaSocket (prefix .. n - #prefix bytes)", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        assert(s:send("xyz"))
        r.ready = pack(c:receive(5, "ab"))        -- data already there
        cosock.spawn(function() net.trickle(s, "uvw") end, "trickler")
        r.waited = pack(c:receive(5, "ab"))       -- data arrives after waits
        r.longprefix = pack(c:receive(2, "abcd")) -- prefix alone satisfies n
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.equal("abxyz", r.ready[1])
      assert.equal("abuvw", r.waited[1])
      assert.equal("abcd", r.longprefix[1])
    end)

    it("puts the prefix in front once, also across waits", function()
      local got
      cosock.spawn(function()
        local c, s = net.pair()
        cosock.spawn(function() net.trickle(s, "abc\n") end, "trickler")
        got = pack(c:receive("*l", "pre:"))
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.equal("pre:abc", got[1])
    end)

    it("timeout 0 fails at once with LuaSocket's values and keeps partial data", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(0)
        r.empty = pack(c:receive())
        assert(s:send("par"))
        socket.sleep(0.02) -- let the bytes reach c (loopback)
        r.partial = pack(c:receive("*l"))
        r.count = pack(c:receive(10, "x"))
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "timeout", "" }, r.empty)
      assert.same({ n = 3, nil, "timeout", "par" }, r.partial)
      assert.same({ n = 3, nil, "timeout", "x" }, r.count)
    end)

    it("a small timeout returns nil, 'timeout', partial with each byte once, and the next call can go on", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(0.2)
        cosock.spawn(function()
          assert(s:send("ab"))
          socket.sleep(0.02)
          assert(s:send("cd"))
        end, "writer")
        r.first = pack(c:receive("*l"))
        assert(s:send("ef\n"))
        c:settimeout(net.TIMEOUT)
        r.second = pack(c:receive("*l", r.first[3]))
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "timeout", "abcd" }, r.first)
      assert.equal("abcdef", r.second[1])
    end)

    -- receive("*l") with settimeout(t, mode) from a peer that sends a byte
    -- every 20 ms, 100 bytes, no newline, then closes: the receive's results.
    local function receive_from_trickler(t, mode)
      local res
      cosock.spawn(function()
        local c, s = net.pair()
        local done = false
        cosock.spawn(function()
          for _ = 1, 100 do
            if done then break end
            assert(s:send("x"))
            socket.sleep(0.02)
          end
          s:close()
        end, "trickler")
        c:settimeout(t, mode)
        res = pack(c:receive("*l"))
        done = true
        c:close()
      end, "reader")
      net.run()
      return res
    end

    it("the default timeout limits each wait, as in LuaSocket (mode 'b')", function()
      local res = receive_from_trickler(0.2) -- every wait is short; the whole takes about 2 s
      -- no wait ran out: the call lasted until the peer closed
      assert.is_nil(res[1])
      assert.equal("closed", res[2])
      assert.equal(string.rep("x", 100), res[3])
    end)

    it("a per-wait timeout counts from each wait, however long the connection lives", function()
      -- Lines come every 0.05 s for 0.3 s: longer than the 0.2 s timeout from
      -- the first wait, shorter than it from each one. Then nothing comes.
      local lines, last, timers_between = {}, nil, nil
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(0.2)
        cosock.spawn(function()
          for i = 1, 6 do
            cosock.socket.sleep(0.05)
            assert(s:send(i .. "\n"))
          end
        end, "sender")
        for _ = 1, 6 do
          lines[#lines + 1] = c:receive()
          -- woken by data: no timer stays armed for this task
          timers_between = math.max(timers_between or 0, net.stats().timers - 1)
        end
        last = pack(c:receive())
        c:close(); s:close()
      end, "receiver")
      net.run()
      assert.same({ "1", "2", "3", "4", "5", "6" }, lines)
      assert.equal(0, timers_between)
      assert.same({ nil, "timeout", "", n = 3 }, last)
    end)

    it("a 't' timeout limits each wait by default, as cosock ignores the mode", function()
      local res = receive_from_trickler(0.2, "t")
      assert.is_nil(res[1])
      assert.equal("closed", res[2]) -- the trickler's 100 bytes came, then it closed
      assert.equal(100, #res[3])
    end)

    it("settimeout by default sets the block timeout whatever the mode, as cosock", function()
      local w = socket.tcp()
      for i, mode in ipairs({ "b", "t", "return", "x", 42 }) do
        assert.equal(1.0, w:settimeout(i, mode))
        assert.equal(i, w.timeout)
      end
      assert.is_nil(w.total)
      w:close()
    end)

    it("with set_luasocket_timeouts(true) a 't' timeout limits the whole call", function()
      cosock.set_luasocket_timeouts(true)
      finally(function() cosock.set_luasocket_timeouts(false) end)
      local res = receive_from_trickler(0.2, "t")
      assert.is_nil(res[1])
      assert.equal("timeout", res[2])
      assert.is_true(#res[3] > 0 and #res[3] < 100, "partial " .. #res[3])
    end)

    it("with set_luasocket_timeouts(true) settimeout takes LuaSocket's modes; any other mode sets the block timeout", function()
      cosock.set_luasocket_timeouts(true)
      finally(function() cosock.set_luasocket_timeouts(false) end)
      local w = socket.tcp()
      assert.equal(1.0, w:settimeout(1, "b"))
      assert.equal(1.0, w:settimeout(2, "t"))
      assert.equal(1.0, w:settimeout(3))
      assert.equal(3, w.timeout)
      assert.equal(2, w.total)
      assert.equal(1.0, w:settimeout(4, "return")) -- LuaSocket reads the first letter
      assert.equal(4, w.total)
      assert.equal(1.0, w:settimeout(5, "block"))
      assert.equal(5, w.timeout)
      assert.equal(1.0, w:settimeout(6, "x"))
      assert.equal(6, w.timeout)
      assert.equal(1.0, w:settimeout(7, 42))
      assert.equal(7, w.timeout)
      assert.equal(4, w.total)
      w:close()
    end)

    it("peer closing mid-receive: 'closed' with the partial data, '*a' succeeds with all data", function()
      local r = {}
      cosock.spawn(function()
        local c1, s1 = net.pair()
        cosock.spawn(function() net.trickle(s1, "abcd"); s1:close() end, "closer1")
        r.count = pack(c1:receive(10))
        c1:close()
        local c2, s2 = net.pair()
        cosock.spawn(function() net.trickle(s2, "no newline"); s2:close() end, "closer2")
        r.line = pack(c2:receive("*l"))
        c2:close()
        local c3, s3 = net.pair()
        cosock.spawn(function() net.trickle(s3, "all of it\nand more"); s3:close() end, "closer3")
        r.all = pack(c3:receive("*a"))
        r.after = pack(c3:receive("*a"))
        c3:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "closed", "abcd" }, r.count)
      assert.same({ n = 3, nil, "closed", "no newline" }, r.line)
      assert.same({ n = 1, "all of it\nand more" }, r.all)
      assert.same({ n = 1, "" }, r.after)
    end)

    it("takes lines that came together one at a time, drops '\\r', and leaves the rest to LuaSocket", function()
      local data, r = "a\r\nb\r\r\nrest", {}
      cosock.spawn(function()
        local c, s = net.pair()
        assert(s:send(data))
        r.a = pack(c:receive())
        r.dirty = c:dirty()
        r.selected = socket.select({ c }, nil, 5)  -- the buffered line: at once, no wait
        r.b = pack(c:receive("*l"))
        r.rest = pack(c.inner_sock:receive(4)) -- straight from LuaSocket's buffer
        r.stats = pack(c:getstats())
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.same({ n = 1, "a" }, r.a)
      assert.is_true(r.dirty)
      assert.equal(1, #r.selected)
      assert.same({ n = 1, "b" }, r.b)
      assert.same({ n = 3, "rest", nil, nil }, r.rest)
      assert.equal(#data, r.stats[1])            -- every byte received, counted once
    end)

    -- With the fast path off (./configure --disable-fast-path or
    -- COSOCK_NO_FAST_PATH=1) every receive goes through LuaSocket's method.
    it("takes a whole line itself; a partial line goes through LuaSocket's receive", function()
      local calls = net.count_tcp_calls("receive", finally)
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        assert(s:send("whole\n"))
        r.whole, r.calls_whole = c:receive(), calls()
        cosock.spawn(function() net.trickle(s, "in\r\nparts\n") end, "trickler")
        r.parts = { c:receive(), c:receive() }
        r.calls_parts = calls()
        c:close(); s:close()
      end, "reader")
      net.run()
      assert.equal("whole", r.whole)
      assert.equal(core.fast_path and 0 or 1, r.calls_whole)
      assert.same({ "in", "parts" }, r.parts)
      assert.is_true(r.calls_parts > 0)
    end)

    it("receive on a wrapper closed locally returns nil, 'closed'; '*a' cosock's ''", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        assert(s:send("unread\n"))
        c:close()
        r.line = pack(c:receive())
        r.count = pack(c:receive(3))
        -- cosock 0.2.0's: the end of the data, nothing ("*a" and "closed");
        -- LuaSocket says nil, "closed", "" (doc/behaviour.md)
        r.all = pack(c:receive("*a"))
        r.prefix = pack(c:receive("*a", "pre"))
        s:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "closed", "" }, r.line)
      assert.same({ n = 3, nil, "closed", "" }, r.count)
      assert.same({ n = 1, "" }, r.all)
      assert.same({ n = 1, "pre" }, r.prefix)
    end)

    it("with set_close_wakes(true), '*a' on a wrapper closed locally is LuaSocket's nil, 'closed'", function()
      local r
      cosock.set_close_wakes(true)
      finally(function() cosock.set_close_wakes(false) end)
      cosock.spawn(function()
        local c, s = net.pair()
        c:close()
        r = pack(c:receive("*a"))
        s:close()
      end, "reader")
      net.run()
      assert.same({ n = 3, nil, "closed", "" }, r)
    end)
  end)

  describe("send", function()
    it("sends a payload far larger than the socket buffers; the peer gets every byte once", function()
      local data = net.pattern(8 * 1024 * 1024)
      local sent, got
      cosock.spawn(function()
        local c, s = net.pair()
        cosock.spawn(function()
          got = pack(s:receive(#data))
          s:close()
        end, "reader")
        sent = pack(c:send(data))
        c:close()
      end, "writer")
      net.run()
      assert.equal(#data, sent[1])
      assert.equal(#data, #got[1])
      assert.is_true(got[1] == data)
    end)

    it("honours i and j like LuaSocket", function()
      local sent, got
      cosock.spawn(function()
        local c, s = net.pair()
        sent = pack(c:send("0123456789", 3, 6))
        got = pack(s:receive(4))
        c:close(); s:close()
      end, "writer")
      net.run()
      assert.equal(6, sent[1])
      assert.equal("2345", got[1])
    end)

    it("a timed-out send returns nil, 'timeout', last byte sent; resuming from there delivers the rest", function()
      local data = net.pattern(8 * 1024 * 1024)
      local first, rest, got
      cosock.spawn(function()
        local c, s = net.pair()
        c:settimeout(0.05)
        first = pack(c:send(data)) -- nobody reads yet: fills the buffers, then times out
        cosock.spawn(function() got = s:receive(#data); s:close() end, "reader")
        c:settimeout(net.TIMEOUT)
        rest = pack(c:send(data, first[3] + 1))
        c:close()
      end, "writer")
      net.run()
      assert.is_nil(first[1])
      assert.equal("timeout", first[2])
      assert.is_true(first[3] > 0 and first[3] < #data)
      assert.equal(#data, rest[1])
      assert.is_true(got == data)
    end)

    it("returns what LuaSocket's send returns (a float byte index, nil, nil)", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        r.wrapped = pack(c:send("abc"))
        r.plain = pack(c.inner_sock:send("abc"))
        r.got = s:receive(6)
        c:close(); s:close()
      end, "writer")
      net.run()
      assert.equal(3, r.plain.n)
      assert.equal(r.plain.n, r.wrapped.n)
      assert.equal(r.plain[1], r.wrapped[1])
      assert.equal(V.describe(r.plain[1]), V.describe(r.wrapped[1]))
      assert.equal("abcabc", r.got)
    end)

    -- A whole-string send on a connected TCP socket is written to the fd by
    -- the wrapper itself (src/features/wrapper.c send_direct); getstats must still count it.
    it("writes whole strings itself, and getstats/setstats count those bytes", function()
      local calls = net.count_tcp_calls("send", finally)
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        local _, before = c:getstats()
        assert(c:send("hello"))
        r.calls_whole = calls()
        assert(c:send("0123456789", 3, 6))     -- through LuaSocket's send
        r.calls_part = calls()
        r.stats = pack(c:getstats())
        r.stats.before = before
        r.set = pack(c:setstats(nil, 100))
        assert(c:send("xy"))
        r.after = pack(c:getstats())
        r.kept = pack(c:setstats(7))            -- no sent count: the count stays
        r.kept_stats = pack(c:getstats())
        r.got = s:receive(11)
        c:close(); s:close()
      end, "writer")
      net.run()
      assert.equal(core.fast_path and 0 or 1, r.calls_whole) -- the direct path ran (when on)
      assert.equal(core.fast_path and 1 or 2, r.calls_part)
      assert.equal(r.stats.before + 9, r.stats[2])
      assert.equal(3, r.stats.n)
      assert.equal(1, r.set[1])
      assert.equal(102, r.after[2])
      assert.equal(1, r.kept[1])
      assert.equal(7, r.kept_stats[1])
      assert.equal(102, r.kept_stats[2])
      assert.equal("hello2345xy", r.got)
    end)

    it("after the inner socket was closed behind the wrapper, fails as LuaSocket does", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        assert(c:send("x"))                     -- the wrapper has written to this fd
        local inner = c.inner_sock
        inner:close()
        r.wrapped = pack(c:send("after close"))
        r.plain = pack(inner:send("after close"))
        s:close()
      end, "writer")
      net.run()
      assert.is_nil(r.wrapped[1])
      assert.equal(r.plain[2], r.wrapped[2])
      assert.equal(r.plain[3], r.wrapped[3])
    end)

    it("to a peer that is gone, reports LuaSocket's error for it", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        s.inner_sock:setoption("linger", { on = true, timeout = 0 })
        s:close()                               -- the peer resets the connection
        local res
        for _ = 1, 100 do
          res = pack(c:send("ping\n"))
          if res[1] == nil then break end
          cosock.socket.sleep(0.001)
        end
        r.wrapped = res
        r.plain = pack(c.inner_sock:send("ping\n"))
        c:close()
      end, "writer")
      net.run()
      assert.is_nil(r.wrapped[1])
      assert.equal("string", type(r.wrapped[2]))
      assert.equal(r.plain[2], r.wrapped[2])
    end)
  end)

  describe("bad arguments to receive and send", function()
    -- The checks LuaSocket makes, with its messages, naming the wrapper's
    -- method as a call from Lua does; nothing is read or sent.
    local function errors_of(fn)
      local errs
      cosock.spawn(function()
        local c, s = net.pair()
        errs = fn(c, s)
        c:close(); s:close()
      end, "caller")
      net.run()
      return errs
    end

    -- The error of call(args) for each argument list (n arguments each),
    -- "no error" when it returned.
    local function each_error(call, n, cases)
      local out = {}
      for i, args in ipairs(cases) do
        local ok, err = pcall(call, compat.unpack(args, 1, n))
        out[i] = ok and "no error" or err
      end
      return out
    end

    it("refuses an unknown pattern, a negative count and a prefix that is not a string", function()
      local errs = errors_of(function(c)
        -- a method call, as users write it (not a tail call: it names the method)
        return each_error(function(...) local r = c:receive(...) return r end, 2,
          { { "x" }, { "l" }, { -1 }, { {} }, { "*l", {} } })
      end)
      local function bad(n, msg) return ("bad argument #%d to 'receive' %%(%s%%)"):format(V.method_arg(n), msg) end
      assert.has.match(bad(1, "invalid receive pattern"), errs[1])
      assert.has.match(bad(1, "invalid receive pattern"), errs[2])
      assert.has.match(bad(1, "invalid receive pattern"), errs[3])
      assert.has.match(bad(1, "string expected, got table"), errs[4])
      assert.has.match(bad(2, "string expected, got table"), errs[5])
    end)

    it("takes the patterns LuaSocket takes: a numeric string counts bytes, '*all' reads all", function()
      local got = errors_of(function(c, s)
        assert(c:send("abcdefg"))
        local five = s:receive("5")
        c:close()
        return { five, s:receive("*all") }
      end)
      assert.same({ "abcde", "fg" }, got)
    end)

    it("refuses send data that is not a string and bounds that are not numbers", function()
      local errs = errors_of(function(c)
        return each_error(function(...) local r = c:send(...) return r end, 3,
          { { nil }, { {} }, { "x", {} }, { "x", 1, "y" } })
      end)
      local function bad(n, msg) return ("bad argument #%d to 'send' %%(%s%%)"):format(V.method_arg(n), msg) end
      assert.has.match(bad(1, "string expected, got nil"), errs[1])
      assert.has.match(bad(1, "string expected, got table"), errs[2])
      assert.has.match(bad(2, "number expected, got table"), errs[3])
      assert.has.match(bad(3, "number expected, got string"), errs[4])
    end)

    it("says so when called on something that is not a wrapper", function()
      assert.has_error(function() socket.tcp.receive({}) end,
        "cosock: receive on a socket wrapper without an inner socket")
      assert.has_error(function() socket.tcp.send({}, "x") end,
        "cosock: send on a socket wrapper without an inner socket")
      local ok, err = pcall(socket.tcp.receive, 42)
      assert.is_false(ok)
      assert.has.match("bad argument #1 to '[%w%.]*receive' %(table expected, got number%)", err)
    end)
  end)

  describe("connect and accept", function()
    it("connect returns 1, then 'already connected' on a second connect", function()
      local r = {}
      cosock.spawn(function()
        local srv, port = net.listen()
        local c = socket.tcp()
        c:settimeout(net.TIMEOUT)
        r.first = pack(c:connect("127.0.0.1", port))
        r.second = pack(c:connect("127.0.0.1", port))
        local a = assert(srv:accept())
        a:close(); c:close(); srv:close()
      end, "connector")
      net.run()
      assert.same({ n = 1, 1 }, r.first)
      assert.same({ n = 2, nil, "already connected" }, r.second)
    end)

    it("connect to a closed port returns nil, 'connection refused'", function()
      local r
      cosock.spawn(function()
        local c = socket.tcp()
        c:settimeout(net.TIMEOUT)
        r = pack(c:connect("127.0.0.1", net.dead_port()))
        c:close()
      end, "connector")
      net.run()
      assert.same({ n = 2, nil, "connection refused" }, r)
    end)

    it("accept with timeout 0 or a small timeout returns nil, 'timeout'", function()
      local r = {}
      cosock.spawn(function()
        local srv = net.listen()
        srv:settimeout(0)
        r.zero = pack(srv:accept())
        srv:settimeout(0.02)
        r.small = pack(srv:accept())
        srv:close()
      end, "acceptor")
      net.run()
      assert.same({ n = 2, nil, "timeout" }, r.zero)
      assert.same({ n = 2, nil, "timeout" }, r.small)
    end)

    it("accept waits for a client that connects later; the accepted wrapper starts without a timeout", function()
      local r = {}
      cosock.spawn(function()
        local srv, port = net.listen()
        cosock.spawn(function()
          socket.sleep(0.01)
          local c = assert(socket.connect("127.0.0.1", port))
          c:settimeout(net.TIMEOUT)
          assert(c:send("hi\n"))
          r.reply = c:receive()
          c:close()
        end, "client")
        local a = assert(srv:accept())
        r.timeout = a.timeout
        a:settimeout(net.TIMEOUT)
        r.line = a:receive()
        assert(a:send("yo\n"))
        a:close(); srv:close()
      end, "server")
      net.run()
      assert.is_nil(r.timeout)
      assert.equal("hi", r.line)
      assert.equal("yo", r.reply)
    end)

    it("serves 60 concurrent clients from one server", function()
      local N = 60
      local replies, served = {}, 0
      cosock.spawn(function()
        local srv, port = net.listen(N)
        for i = 1, N do
          cosock.spawn(function()
            local c = assert(socket.connect("127.0.0.1", port))
            c:settimeout(net.TIMEOUT)
            -- two writes with a pass between, so the server must wait mid-line
            assert(c:send("client "))
            socket.sleep(0)
            assert(c:send(i .. "\n"))
            replies[i] = c:receive()
            c:close()
          end, "client " .. i)
        end
        for _ = 1, N do
          local a = assert(srv:accept())
          a:settimeout(net.TIMEOUT)
          cosock.spawn(function()
            local line = assert(a:receive())
            assert(a:send("echo " .. line .. "\n"))
            served = served + 1
            a:close()
          end, "handler")
        end
        srv:close()
      end, "server")
      net.run()
      assert.equal(N, served)
      for i = 1, N do assert.equal("echo client " .. i, replies[i]) end
    end)
  end)

  describe("waker protocol", function()
    it("setwaker accepts one waker per kind and rejects a second one", function()
      local w = socket.tcp()
      local f = function() end
      w:setwaker("recvr", f)
      w:setwaker("sendr", f)
      local ok, err = pcall(w.setwaker, w, "recvr", f)
      assert.is_false(ok)
      assert.matches("recvr waker already set, sockets can only block one thread per waker kind", err, 1, true)
      ok, err = pcall(w.setwaker, w, "sendr", f)
      assert.is_false(ok)
      assert.matches("sendr waker already set, sockets can only block one thread per waker kind", err, 1, true)
      w:setwaker("recvr", nil)
      w:setwaker("recvr", f) -- free again after nil
      assert.matches("unsupported wake kind: bogus", net.error_of(function() w:setwaker("bogus", f) end),
        1, true)
      w:close()
    end)

    it("close() keeps the stored wakers uncalled by default, as cosock's close", function()
      local w = socket.tcp()
      local calls = {}
      w:setwaker("recvr", function() calls[#calls + 1] = "recvr" end)
      assert.equal(1, w:close())
      assert.same({}, calls)
      -- a waker set on a closed wrapper is not called either
      w:setwaker("sendr", function() calls[#calls + 1] = "sendr" end)
      assert.same({}, calls)
      w:setwaker("recvr", nil)
      w:setwaker("sendr", nil)
    end)

    it("with set_close_wakes(true), close() calls the stored wakers (so a blocked task wakes), and drops them", function()
      cosock.set_close_wakes(true)
      finally(function() cosock.set_close_wakes(false) end)
      local w = socket.tcp()
      local calls = {}
      w:setwaker("recvr", function() calls[#calls + 1] = "recvr" end)
      w:setwaker("sendr", function() calls[#calls + 1] = "sendr" end)
      assert.equal(1, w:close())
      assert.same({ "recvr", "sendr" }, calls)
      w:_wake("recvr")
      assert.equal(2, #calls)
      -- a waker set on a closed wrapper is called at once
      w:setwaker("recvr", function() calls[#calls + 1] = "late" end)
      assert.same({ "recvr", "sendr", "late" }, calls)
      assert.is_nil(w._recvr_waker)
    end)

    it("_wake calls the waker of that kind once", function()
      local w = socket.tcp()
      local calls = 0
      w:setwaker("recvr", function() calls = calls + 1 end)
      w:_wake("sendr")
      assert.equal(0, calls)
      w:_wake("recvr")
      w:_wake("recvr")
      assert.equal(1, calls)
      w:close()
    end)

    it("two tasks receiving on one socket: run raises the recvr waker error", function()
      local pair = {}
      cosock.spawn(function()
        pair.c, pair.s = net.pair()
        for i = 1, 2 do
          cosock.spawn(function() pair.c:receive() end, "receiver " .. i)
        end
      end, "setup")
      local ok, err = pcall(cosock.run)
      assert.is_false(ok)
      assert.matches("recvr waker already set, sockets can only block one thread per waker kind",
        tostring(err), 1, true)
      pair.c:close(); pair.s:close()
    end)

    it("one task sends while another receives on the same wrapper (one waker per kind)", function()
      local data = net.pattern(4 * 1024 * 1024)
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        local tx, rx = cosock.channel.new()
        rx:settimeout(net.TIMEOUT)
        -- c sends to s and receives from s at the same time, from two tasks
        cosock.spawn(function() r.c_sent = c:send(data); tx:send("c send") end, "c sender")
        cosock.spawn(function() r.c_got = c:receive(#data); tx:send("c recv") end, "c receiver")
        cosock.spawn(function() r.s_sent = s:send(data); tx:send("s send") end, "s sender")
        r.s_got = s:receive(#data)
        for _ = 1, 3 do assert(rx:receive()) end
        c:close(); s:close()
      end, "duplex")
      net.run()
      assert.equal(#data, r.c_sent)
      assert.equal(#data, r.s_sent)
      assert.is_true(r.c_got == data)
      assert.is_true(r.s_got == data)
    end)

    it("data buffered inside LuaSocket (dirty) makes select return at once", function()
      local r
      cosock.spawn(function()
        local c, s = net.pair()
        assert(s:send("first\nsecond\n"))
        assert.equal("first", c:receive()) -- "second\n" stays in LuaSocket's buffer
        r = pack(socket.select({ c }, nil, net.TIMEOUT))
        r.line = c:receive()
        c:close(); s:close()
      end, "selector")
      net.run()
      assert.is_not_nil(r[1], "select did not see the buffered data")
      assert.is_nil(r[3])
      assert.equal("second", r.line)
    end)

    it("a wrapper in select is woken when readable", function()
      local r
      cosock.spawn(function()
        local c, s = net.pair()
        cosock.spawn(function() socket.sleep(0.01); assert(s:send("x")) end, "writer")
        r = pack(socket.select({ c }, nil, net.TIMEOUT))
        r.is_c = r[1] ~= nil and rawequal(r[1][1], c)
        r.data = c:receive(1)
        c:close(); s:close()
      end, "selector")
      net.run()
      assert.equal(3, r.n)
      assert.equal(1, #r[1])
      assert.is_true(r.is_c)
      assert.is_nil(r[2]); assert.is_nil(r[3])
      assert.equal("x", r.data)
    end)
  end)

  describe("pass-through methods", function()
    it("reach the LuaSocket object", function()
      local r = {}
      cosock.spawn(function()
        local c, s = net.pair()
        r.fd = c:getfd()
        r.inner_fd = c.inner_sock:getfd()
        r.dirty = c:dirty()
        r.family = c:getfamily()
        r.peer = { c:getpeername() }
        r.sock = { s:getsockname() }
        r.opt = { c:setoption("tcp-nodelay", true) }
        r.nodelay = c:getoption("tcp-nodelay")
        r.stats = { c:getstats() }
        c:close(); s:close()
      end, "pt")
      net.run()
      assert.equal(r.inner_fd, r.fd)
      assert.is_true(r.fd >= 0)
      assert.is_false(r.dirty)
      assert.equal("inet4", r.family)
      assert.equal("127.0.0.1", r.peer[1])
      assert.equal(tostring(r.peer[2]), tostring(r.sock[2]))
      assert.equal(1, r.opt[1])
      assert.is_true(r.nodelay)
      assert.equal(3, #r.stats)
    end)

    it("tcp4 and tcp6 give tcp{master} wrappers of their family", function()
      local w4, w6 = socket.tcp4(), socket.tcp6()
      assert.equal("tcp{master}", w4.class)
      assert.equal("tcp{master}", w6.class)
      assert.equal("inet4", w4:getfamily())
      assert.equal("inet6", w6:getfamily())
      assert.is_true(rawequal(getmetatable(w6).__index, socket.tcp))
      w4:close(); w6:close()
    end)

    it("wraps LuaSocket's own tcp (not a copy of its methods)", function()
      local w = socket.tcp()
      assert.is_true(getmetatable(w.inner_sock) == getmetatable(luasocket.tcp()))
      w:close()
    end)
  end)
end)
