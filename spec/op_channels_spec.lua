-- cosock.op on cosock channels: op.send / op.recv, rendezvous pairing between
-- performs, and exactly-once delivery under timeouts and cancels (seeded
-- random schedules).

local cosock = require "cosock"
local core = require "cosock.core"
local op = require "cosock.op"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local channel = cosock.channel
local pack = net.pack

local in_task = net.in_task

local function add(t, v) t[#t + 1] = v end

describe("cosock.op on channels", function()
  before_each(function() cosock.reset() end)
  after_each(function() net.check_clean() end)

  describe("send and recv", function()
    it("send on an unbounded channel completes at once with true", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        return op.send(tx, "m"):perform(), rx:receive()
      end)
      assert.same(pack(true, "m"), r)
    end)

    it("recv takes a queued message, nil included", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        tx:send(nil)
        tx:send("b")
        return pack(op.recv(rx):perform()).n, op.recv(rx):perform()
      end)
      assert.same(pack(1, "b"), r)
    end)

    it("send on a full bounded channel waits until a receive makes room", function()
      local log = {}
      in_task(function()
        local tx, rx = channel.new(1)
        tx:send(1)
        cosock.spawn(function()
          cosock.socket.sleep(0.01)
          add(log, "receive " .. rx:receive())
          add(log, "receive " .. rx:receive())
        end, "receiver")
        add(log, "send " .. tostring(op.send(tx, 2):perform()))
      end)
      -- the receive moved the waiting message into the queue: the receiver
      -- takes it before the sender's perform returns
      assert.same({ "receive 1", "receive 2", "send true" }, log)
    end)

    it("closed channels: send gives nil, 'closed', recv nil, 'closed' once empty", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        tx:send("last")
        tx:close()
        local s = pack(op.send(tx, 1):perform())
        return s[1], s[2], op.recv(rx):perform(), op.recv(rx):perform()
      end)
      assert.same(pack(nil, "closed", "last", nil, "closed"), r)
    end)

    it("a send waiting in a perform is woken by the receiver's close with nil, 'closed'", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        cosock.spawn(function() cosock.socket.sleep(0.01); rx:close() end, "closer")
        return op.send(tx, 1):perform()
      end)
      assert.same(pack(nil, "closed"), r)
    end)

    it("leaves the channel's own timeouts as they were", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        tx:settimeout(0.5)
        rx:settimeout(0.25)
        cosock.spawn(function() rx:receive() end, "receiver")
        op.send(tx, 1):perform()
        op.choice(op.recv(rx), op.always()):perform()
        return tx.timeout, rx.timeout
      end)
      assert.same(pack(0.5, 0.25), r)
    end)
  end)

  describe("rendezvous (capacity 0)", function()
    it("pairs a send perform with a recv perform, the receiver first", function()
      local log = {}
      cosock.spawn(function()
        local tx, rx = channel.new(0)
        cosock.spawn(function() add(log, "got " .. op.recv(rx):perform()) end, "receiver")
        cosock.socket.sleep(0.01)
        add(log, "sent " .. tostring(op.send(tx, "m"):perform()))
      end, "sender")
      net.run()
      assert.same({ "got m", "sent true" }, log)
    end)

    it("pairs a send perform with a recv perform, the sender first", function()
      local log = {}
      cosock.spawn(function()
        local tx, rx = channel.new(0)
        cosock.spawn(function() add(log, "sent " .. tostring(op.send(tx, "m"):perform())) end, "sender")
        cosock.socket.sleep(0.01)
        assert.equal(1, core.channel_senders(rx.link))
        add(log, "got " .. op.recv(rx):perform())
      end, "receiver")
      net.run()
      assert.same({ "got m", "sent true" }, log)
    end)

    it("pairs with plain send and receive", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local tx2, rx2 = channel.new(0)
        cosock.spawn(function() tx:send("plain") end, "plain sender")
        cosock.spawn(function() assert(rx2:receive() == "op") end, "plain receiver")
        return op.recv(rx):perform(), op.send(tx2, "op"):perform()
      end)
      assert.same(pack("plain", true), r)
    end)

    it("a send that timed out leaves nothing in line", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local v = op.choice(op.send(tx, "m"), op.sleep(0.01):wrap(function() return "timeout" end)):perform()
        return v, core.channel_senders(rx.link), op.choice(op.recv(rx), op.always("empty")):perform()
      end)
      assert.same(pack("timeout", 0, "empty"), r)
    end)

    it("a choice of two sends delivers one message only, to the first receiver to come", function()
      local log = {}
      cosock.spawn(function()
        local tx1, rx1 = channel.new(0)
        local tx2, rx2 = channel.new(0)
        cosock.spawn(function()
          add(log, op.choice(op.send(tx1, "one"):wrap(function() return "sent one" end),
            op.send(tx2, "two"):wrap(function() return "sent two" end)):perform())
        end, "sender")
        cosock.socket.sleep(0.01)
        assert.equal(1, core.channel_senders(rx1.link))
        assert.equal(1, core.channel_senders(rx2.link))
        add(log, "got " .. rx2:receive())
        -- The other offer left its line in that very receive.
        add(log, "senders on 1: " .. core.channel_senders(rx1.link))
        rx1:settimeout(0.02)
        add(log, table.concat({ tostring(rx1:receive()) }, ","))
      end, "receivers")
      net.run()
      assert.same({ "got two", "senders on 1: 0", "sent two", "nil" }, log)
    end)

    it("two performs exchange: one's send pairs with the other's recv, not both ways", function()
      local a, b
      cosock.spawn(function()
        local tx1, rx1 = channel.new(0)
        local tx2, rx2 = channel.new(0)
        cosock.spawn(function()
          a = op.choice(op.send(tx1, "from a"):wrap(function() return "a sent" end), op.recv(rx2)):perform()
        end, "a")
        cosock.spawn(function()
          b = op.choice(op.send(tx2, "from b"):wrap(function() return "b sent" end), op.recv(rx1)):perform()
        end, "b")
      end, "setup")
      net.run()
      local ok = (a == "a sent" and b == "from a") or (b == "b sent" and a == "from b")
      assert.is_true(ok, tostring(a) .. " / " .. tostring(b))
    end)

    it("several performs may wait to receive on one channel: each message goes to one", function()
      local got = {}
      cosock.spawn(function()
        local tx, rx = channel.new(0)
        for i = 1, 3 do
          cosock.spawn(function()
            local v = op.choice(op.recv(rx), op.sleep(1):wrap(function() return "timeout" end)):perform()
            got[#got + 1] = i .. ":" .. v
          end, "receiver " .. i)
        end
        cosock.socket.sleep(0.01)
        for m = 1, 3 do assert.is_true(op.send(tx, "m" .. m):perform()) end
      end, "sender")
      net.run()
      assert.same({ "1:m1", "2:m2", "3:m3" }, got)
    end)

    it("a receive perform beside a task in a plain receive on the same channel raises", function()
      local r = in_task(function()
        local tx, rx = channel.new()
        cosock.spawn(function() rx:receive() end, "plain")
        cosock.socket.sleep(0.005)
        local ok, err = pcall(op.perform, op.choice(op.recv(rx), op.sleep(1)))
        tx:send("for plain")
        return ok, tostring(err):match("waker already set, receive can't be waited on from multiple places at once") ~= nil
      end)
      assert.same(pack(false, true), r)
    end)

    it("a choice sending and receiving on one channel does not pair with itself", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        return op.choice(op.send(tx, 1), op.recv(rx), op.sleep(0.02):wrap(function() return "timeout" end))
          :perform()
      end)
      assert.same(pack("timeout"), r)
    end)
  end)

  describe("exactly once", function()
    it("a cancelled recv perform takes nothing", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local h = cosock.spawn(function() op.recv(rx):perform() end, "receiver")
        cosock.socket.sleep(0.01)
        h:cancel()
        cosock.spawn(function() tx:send("m") end, "sender")
        return op.recv(rx):perform()
      end)
      assert.same(pack("m"), r)
    end)

    it("a cancelled send perform leaves its line: its message is never received", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        local h = cosock.spawn(function() op.send(tx, "cancelled"):perform() end, "sender")
        cosock.socket.sleep(0.01)
        assert.equal(1, core.channel_senders(rx.link))
        h:cancel()
        return core.channel_senders(rx.link), op.choice(op.recv(rx), op.sleep(0.01):wrap(function() return "none" end)):perform()
      end)
      assert.same(pack(0, "none"), r)
    end)

    it("a cancelled choice withdraws its send offers from every line", function()
      local r = in_task(function()
        local tx1, rx1 = channel.new(0)
        local tx2, rx2 = channel.new(1)
        tx2:send("fills")
        local h = cosock.spawn(function()
          op.choice(op.send(tx1, "x"), op.send(tx2, "y"), op.never()):perform()
        end, "offers")
        cosock.socket.sleep(0.01)
        local before = core.channel_senders(rx1.link) + core.channel_senders(rx2.link)
        h:cancel()
        local after = core.channel_senders(rx1.link) + core.channel_senders(rx2.link)
        return before, after, rx2:receive(), op.choice(op.recv(rx2), op.recv(rx1), op.always("none")):perform()
      end)
      assert.same(pack(2, 0, "fills", "none"), r)
    end)

    it("works in a coroutine whose yields the task forwards", function()
      local r = in_task(function()
        local tx, rx = channel.new(0)
        cosock.spawn(function() cosock.socket.sleep(0.005); tx:send("fwd") end, "sender")
        return net.forwarding(function()
          return op.choice(op.recv(rx), op.sleep(1):wrap(function() return "timeout" end)):perform()
        end)
      end)
      assert.same(pack("fwd"), r)
    end)

    -- Senders perform choice(send(c_i, id), send(c_j, id), sleep(random));
    -- one receiver per group of channels performs choice(recv..., sleep(random));
    -- a killer cancels random senders and receivers (receivers are replaced).
    -- Whatever the schedule: no message is received twice, every message whose
    -- send perform returned true is received, a message whose perform chose the
    -- sleep is never received, and nothing is received that was not sent.
    for seed = 1, 6 do
      it("under timeouts and cancels, seed " .. seed, function()
        math.randomseed(seed)
        local caps = { 0, 0, 1, 3 }
        local txs, rxs = {}, {}
        for i = 1, #caps do txs[i], rxs[i] = channel.new(caps[i]) end
        -- (receivers share channels: several performs wait on one receiver)
        local groups = { { 1, 2 }, { 3, 4 }, { 2, 3 }, { 4, 1 } }
        local attempted, sent, timed_out, received = {}, {}, {}, {}
        local dup
        local stop = op.cond()
        local senders, receivers, live = {}, {}, 0

        local function receiver(g)
          return cosock.spawn(function()
            local ops = {}
            for _, i in ipairs(groups[g]) do ops[#ops + 1] = op.recv(rxs[i]) end
            ops[#ops + 1] = stop:wait_op():wrap(function() return "stop" end)
            local o = op.choice(compat.unpack(ops))
            while true do
              local v = op.choice(o, op.sleep(math.random() * 0.004):wrap(function() return "idle" end)):perform()
              if v == "stop" then return end
              if v ~= "idle" then
                if received[v] then dup = v end
                received[v] = true
              end
            end
          end, "receiver " .. g)
        end

        cosock.spawn(function()
          for g = 1, #groups do receivers[g] = receiver(g) end
          for s = 1, 12 do
            live = live + 1
            senders[s] = cosock.spawn(function()
              for k = 1, 15 do
                local id = s * 1000 + k
                local i, j = math.random(#caps), math.random(#caps)
                attempted[id] = true
                local v = op.choice(op.send(txs[i], id), op.send(txs[j], id),
                  op.sleep(math.random() * 0.003):wrap(function() return "timeout" end)):perform()
                if v == true then sent[id] = true else timed_out[id] = true end
                if math.random() < 0.3 then cosock.socket.sleep(0) end
              end
              live = live - 1
            end, "sender " .. s)
          end
          -- The killer.
          for _ = 1, 20 do
            cosock.socket.sleep(math.random() * 0.003)
            if math.random() < 0.5 then
              local s = math.random(#senders)
              if senders[s]:is_alive() then
                senders[s]:cancel()
                live = live - 1
              end
            else
              local g = math.random(#groups)
              receivers[g]:cancel()
              receivers[g] = receiver(g)
            end
          end
          while live > 0 do cosock.socket.sleep(0.002) end
          stop:signal()
        end, "killer")
        net.run()

        assert.is_nil(dup, "received twice")
        local n = 0
        for id in pairs(sent) do
          assert.is_true(received[id] == true, "sent but never received: " .. id)
          n = n + 1
        end
        for id in pairs(timed_out) do assert.is_nil(received[id], "timed out but received: " .. id) end
        for id in pairs(received) do assert.is_true(attempted[id], "received unsent " .. id) end
        assert.is_true(n > 20, "too few messages went through: " .. n)
        for i = 1, #caps do assert.equal(0, core.channel_senders(rxs[i].link)) end
      end)
    end
  end)
end)
