-- cosock.op's receives alone (issue 28): the bound try that op.recv keeps
-- (cosock.core.channel_try_fn), a perform's first tries
-- (channel_try_first_fn), which wait parked in the channels, a wait alone
-- the way a select does where they cannot, and the hub that takes over when
-- a second perform waits on the same receiver (channel_unpark). Every wait
-- here ends by a message, a close or a cancel; the loop itself stops a spec
-- that would hang (net.run's limit).

local cosock = require "cosock"
local core = require "cosock.core"
local op = require "cosock.op"
local net = require "spec.support.net"

local channel = cosock.channel
local pack, in_task = net.pack, net.in_task

local function try_first_of()
  return core.channel_try_first_fn(op.op_methods, require("cosock.op.send").impl)
end

-- Whether a perform's first try waits parked in the channels here: not where
-- yields are emulated (5.1, 5.2, LuaJIT), nor on a build without direct
-- parks (it returns NOMSG, 0 at once).
local function parks()
  local r = in_task(function()
    local _, rx = channel.new()
    cosock.spawn(function() core.channel_unpark(rx.link) end, "waker")
    return select(2, try_first_of()(op.recv(rx)))
  end)
  cosock.reset()
  return r[1] == 4
end

describe("cosock.op receives alone", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("channel_try_fn (the bound try)", function()
    it("returns the oldest message, nil included, as one value", function()
      local tx, rx = channel.new()
      tx:send(nil)
      tx:send("b")
      local try = core.channel_try_fn(rx)
      assert.same(pack(nil), pack(try()))
      assert.same(pack("b"), pack(try()))
    end)

    it("returns the mark channel_nomsg when nothing can be taken, without waiting", function()
      local _, rx = channel.new()
      assert.equal(core.channel_nomsg, core.channel_try_fn(rx)())
      assert.equal("userdata", type(core.channel_nomsg))
    end)

    it("returns nil, 'closed' once the channel is closed and empty", function()
      local tx, rx = channel.new()
      tx:send(1)
      tx:close()
      local try = core.channel_try_fn(rx)
      assert.same(pack(1), pack(try()))
      assert.same(pack(nil, "closed"), pack(try()))
    end)

    it("takes a waiting sender's message from a rendezvous and wakes the sender", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local sent
        cosock.spawn(function() sent = tx:send("m") end, "sender")
        cosock.socket.sleep(0)
        local got = core.channel_try_fn(rx)()
        cosock.socket.sleep(0)
        return got, sent
      end)
      assert.same(pack("m", true), r)
    end)

    it("leaves the receiver's timeout alone", function()
      local _, rx = channel.new()
      rx:settimeout(0.25)
      core.channel_try_fn(rx)()
      assert.equal(0.25, rx.timeout)
    end)

    it("raises a clear error for anything but a receiver", function()
      local tx = channel.new()
      assert.has_error(function() core.channel_try_fn(tx) end,
        "bad argument #1 to 'recv' (cosock.channel receiver expected, got a sender)")
      assert.has_error(function() core.channel_try_fn(42) end,
        "bad argument #1 to 'recv' (cosock.channel receiver expected, got number)")
    end)
  end)

  describe("channel_try_first_fn (a perform's first tries in one call)", function()
    local try_first = try_first_of()
    local NOMSG = core.channel_nomsg

    it("in a task, returns what the first receive that can complete returns", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new()
        local tx2, rx2 = channel.new()
        local c = op.choice(op.recv(rx1), op.recv(rx2))
        tx2:send("two")
        local first = pack(try_first(c))
        tx1:send("one")
        tx2:send("again")
        return first, pack(try_first(c)), pack(try_first(c))
      end)
      assert.same(pack(pack("two"), pack("one"), pack("again")), r)
    end)

    it("returns nil, 'closed' for a closed and empty receiver", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        tx:close()
        return try_first(op.recv(rx))
      end)
      assert.same(pack(nil, "closed"), r)
    end)

    it("returns NOMSG and why nothing was taken: 0 none could, 1 no operation, 2 no task, 3 not receives alone", function()
      local _, rx = channel.new()
      local tx2, rx2 = channel.new()
      local tx = channel.new()
      tx:settimeout(1)
      assert.same(pack(NOMSG, 2), pack(try_first(op.recv(rx))))
      assert.same(pack(NOMSG, 1), pack(try_first({})))
      assert.same(pack(NOMSG, 1), pack(try_first(42)))
      local r = in_task(function()
        -- (0: with a plain receive waiting on rx2 the choice cannot wait)
        local h = cosock.spawn(function() rx2:settimeout(1); return rx2:receive() end, "plain")
        cosock.socket.sleep(0)
        local none = pack(try_first(op.choice(op.recv(rx), op.recv(rx2))))
        tx2:send("x")
        h:join(1)
        return none, pack(try_first(op.send(tx, 1))), pack(try_first(op.recv(rx):wrap(print)))
      end)
      assert.same(pack(pack(NOMSG, 0), pack(NOMSG, 3), pack(NOMSG, 3)), r)
    end)

    -- (where yields are emulated it neither sends nor parks: NOMSG, 3 and
    -- NOMSG, 0; perform then does it from cosock's own code)
    local emulated = rawget(_G, "jit") ~= nil or _VERSION == "Lua 5.1" or _VERSION == "Lua 5.2"

    it("sends a lone send on a sender without a timeout: true, or nil, 'closed'", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        local sent = pack(try_first(op.send(tx, "m")))
        rx:settimeout(0)
        local got = rx:receive()
        tx:close()
        return sent, got, pack(try_first(op.send(tx, "late")))
      end)
      if emulated then
        assert.same(pack(pack(NOMSG, 3), nil, pack(NOMSG, 3)), r)
      else
        assert.same(pack(pack(true), "m", pack(nil, "closed")), r)
      end
    end)

    it("waits in line for a lone send on a rendezvous until a receiver takes it", function()
      if emulated then return end
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local got
        cosock.spawn(function() rx:settimeout(1); got = rx:receive() end, "receiver")
        return pack(try_first(op.send(tx, "m"))), got
      end)
      assert.same(pack(pack(true), "m"), r)
    end)

    it("in a cancelled scope, raises at its wake instead of taking a message", function()
      if not parks() then return end
      local r = in_task(function()
        local tx, rx = channel.new()
        local taken
        cosock.scope.run(function(s)
          cosock.spawn(function() s:cancel() end, "canceller")
          taken = pack(pcall(try_first, op.recv(rx)))
        end)
        tx:send("kept")
        return taken[1], rx:receive()
      end)
      assert.same(pack(false, "kept"), r)
    end)

    it("needs the operations' metatable and the sends' impl", function()
      assert.has_error(function() core.channel_try_first_fn(1, {}) end)
      assert.has_error(function() core.channel_try_first_fn(op.op_methods) end)
    end)
  end)

  describe("channel_unpark", function()
    it("leaves a plain receive's wait alone", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        local h = cosock.spawn(function() rx:settimeout(1); return rx:receive() end, "plain")
        cosock.socket.sleep(0)
        core.channel_unpark(rx.link)
        cosock.socket.sleep(0)
        local still = core.channel_waiting(rx.link)
        tx:send("x")
        return still, pack(h:join(1))
      end)
      assert.same(pack(true, pack(true, "x")), r)
    end)

    it("raises a clear error for anything but a channel's link", function()
      assert.has_error(function() core.channel_unpark({}) end)
      assert.has_error(function() core.channel_unpark(42) end)
    end)
  end)

  it("cosock.op is loaded on first use, and is require 'cosock.op'", function()
    assert.equal(op, cosock.op)
    local listed = false
    for k in pairs(cosock) do listed = listed or k == "op" end
    assert.is_true(listed)
  end)

  -- A perform of receives alone waits parked in their channels from its
  -- first try: one receive, or a choice of two (woken by either). Where it
  -- does not park (parks()), the first try returns NOMSG, 0 at once.
  local lone_waits = {
    { "one receive", function(rx) return try_first_of()(op.recv(rx)) end },
    { "a choice of two", function(rx)
      local _, other = channel.new()
      return try_first_of()(op.choice(op.recv(other), op.recv(rx)))
    end },
  }
  for _, way in ipairs(lone_waits) do
    local name, wait = way[1], way[2]
    local NOMSG = core.channel_nomsg
    describe("the first try's wait for " .. name, function()
      it("parks with nothing there, untimed, and returns the message a send brings", function()
        local parked = parks()
        local r = in_task(function()
          local tx, rx = channel.new()
          rx:settimeout(0) -- (the receiver's own timeout is not the wait's)
          cosock.spawn(function() tx:send("late") end, "sender")
          return pack(wait(rx)), rx.timeout
        end)
        assert.same(pack(parked and pack("late") or pack(NOMSG, 0), 0), r)
      end)

      it("is woken by channel_unpark and returns NOMSG, 4; the receiver is free again", function()
        local parked = parks()
        local r = in_task(function()
          local _, rx = channel.new()
          cosock.spawn(function() core.channel_unpark(rx.link) end, "waker")
          return pack(wait(rx)), core.channel_waiting(rx.link)
        end)
        assert.same(pack(pack(NOMSG, parked and 4 or 0), false), r)
      end)

      it("returns NOMSG, 0 without waiting while another task waits on the receiver", function()
        local r = in_task(function()
          local tx, rx = channel.new()
          local h = cosock.spawn(function() rx:settimeout(1); return rx:receive() end, "plain")
          cosock.socket.sleep(0)
          local first = pack(wait(rx))
          tx:send("x")
          return first, pack(h:join(1))
        end)
        assert.same(pack(pack(NOMSG, 0), pack(true, "x")), r)
      end)
    end)
  end

  describe("a receive perform", function()
    it("returns a message as one value and a close as two", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        tx:send("m")
        local one = pack(op.recv(rx):perform())
        tx:close()
        return one, pack(op.recv(rx):perform())
      end)
      assert.same(pack(pack("m"), pack(nil, "closed")), r)
    end)

    it("waiting alone, is woken by a send and takes the message", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        cosock.spawn(function() tx:send("late") end, "sender")
        return op.recv(rx):perform()
      end)
      assert.same(pack("late"), r)
    end)

    it("waiting alone, gives way to a second perform on the same receiver: each gets one message", function()
      local got = {}
      in_task(function()
        local tx, rx = channel.new()
        local recv = op.recv(rx)
        local function receiver()
          local v = recv:perform()
          got[#got + 1] = v
        end
        local a = cosock.spawn(receiver, "first")
        cosock.socket.sleep(0) -- the first waits alone now
        local b = cosock.spawn(receiver, "second")
        cosock.socket.sleep(0) -- the second took the hub over
        tx:send(1)
        tx:send(2)
        a:join(1)
        b:join(1)
      end)
      table.sort(got)
      assert.same({ 1, 2 }, got)
    end)

    it("cancelled while waiting alone leaves the receiver free for a plain receive", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        local h = cosock.spawn(function() op.recv(rx):perform() end, "waiter")
        cosock.socket.sleep(0)
        h:cancel()
        cosock.socket.sleep(0)
        cosock.spawn(function() tx:send("after") end, "sender")
        rx:settimeout(1)
        return rx:receive()
      end)
      assert.same(pack("after"), r)
    end)

    it("a choice of receives, cancelled while waiting, leaves both receivers free", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new()
        local tx2, rx2 = channel.new()
        local h = cosock.spawn(function() op.choice(op.recv(rx1), op.recv(rx2)):perform() end, "waiter")
        cosock.socket.sleep(0)
        h:cancel()
        cosock.socket.sleep(0)
        cosock.spawn(function() tx1:send(1) tx2:send(2) end, "sender")
        rx1:settimeout(1)
        rx2:settimeout(1)
        return rx1:receive(), rx2:receive()
      end)
      assert.same(pack(1, 2), r)
    end)

    it("a choice of receives that waits takes the first message sent, from either", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new()
        local _, rx2 = channel.new()
        cosock.spawn(function() tx1:send("one") end, "sender")
        return op.choice(op.recv(rx2), op.recv(rx1)):perform()
      end)
      assert.same(pack("one"), r)
    end)

    it("a choice naming one receiver twice waits on it once", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        cosock.spawn(function() tx:send("m") end, "sender")
        return op.choice(op.recv(rx), op.recv(rx)):perform()
      end)
      assert.same(pack("m"), r)
    end)

    it("a waiting choice gives way to a perform on one of its receivers: each gets one message", function()
      local got = {}
      in_task(function()
        local tx1, rx1 = channel.new()
        local tx2, rx2 = channel.new()
        local a = cosock.spawn(function()
          local v = op.choice(op.recv(rx1), op.recv(rx2)):perform()
          got[#got + 1] = v
        end, "choice")
        cosock.socket.sleep(0)
        local b = cosock.spawn(function()
          local v = op.recv(rx2):perform()
          got[#got + 1] = v
        end, "second")
        cosock.socket.sleep(0)
        tx2:send(2)
        tx1:send(1)
        a:join(1)
        b:join(1)
      end)
      table.sort(got)
      assert.same({ 1, 2 }, got)
    end)

    it("waiting alone while a plain receive waits on the receiver raises cosock's error", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        cosock.spawn(function() rx:receive() end, "plain")
        cosock.socket.sleep(0)
        local ok, err = pcall(op.perform, op.recv(rx))
        tx:send("for the plain one")
        return ok, err
      end)
      assert.is_false(r[1])
      assert.matches("waker already set", r[2])
    end)
  end)
end)
