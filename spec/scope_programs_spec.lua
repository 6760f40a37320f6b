-- Whole programs over cosock.scope and cosock.sync, written against the
-- documented API only (doc/structured-concurrency.md): a supervisor tree,
-- deadlines around real socket work, cancellation in the middle of a TLS
-- handshake, of a lock wait and of a receive on a socket another task
-- closed, cosock.stop() reaching a scope. Every socket wait has a limit
-- (net.TIMEOUT) besides the scope's own.

local cosock = require "cosock"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local scope, sync = cosock.scope, cosock.sync
local pack, unpack = compat.pack, compat.unpack
local pcall = compat.pcall -- (a pcall a task may wait in, on Lua 5.1 too)
local sleep = cosock.socket.sleep
local CANCELLED = scope.cancelled

-- Runs fn, logging its cancellation (or error) as cleanup sees it, and
-- raises it again; returns fn's results otherwise.
local function cleanup_logged(log, name, fn, ...)
  local r = pack(pcall(fn, ...))
  if r[1] then return unpack(r, 2, r.n) end
  log[#log + 1] = name .. ": " .. tostring(r[2])
  error(r[2], 0)
end

describe("programs over cosock.scope and cosock.sync", function()
  before_each(function() cosock.reset() end)

  it("a supervisor tree: a failing worker's subtree restarts, the other subtree runs on", function()
    local log, restarts, served = {}, 0, 0
    -- A subtree: a worker that fails its first two runs and a sibling that
    -- waits for ever; the worker's failure cancels the sibling (cleanup runs).
    local function subtree(s, attempt)
      s:spawn(function()
        cleanup_logged(log, "sibling " .. attempt, function()
          local _, rx = cosock.channel.new()
          rx:receive()
        end)
      end, "sibling")
      local worker = s:spawn(function()
        sleep(0.002)
        if attempt < 3 then error("worker failed on attempt " .. attempt, 0) end
        return "ok"
      end, "worker")
      assert(worker:join(net.TIMEOUT)) -- (a failure cancels this wait too)
      s:cancel() -- the work is done: the sibling goes
      return "done"
    end
    local r = net.in_task_virtual(function() -- (sleeps order its tasks)
      return scope.run(function(root)
        root:spawn(function() -- supervisor: restarts its subtree until it ends well
          for attempt = 1, 5 do
            local ok, err = scope.run(subtree, attempt)
            if ok then
              log[#log + 1] = "subtree " .. err .. " on attempt " .. attempt
              return
            end
            log[#log + 1] = "restart after: " .. err:match("^[^\n]*")
            restarts = restarts + 1
          end
        end, "supervisor")
        root:spawn(function() -- a sibling subtree with its own deadline
          local ok, err = scope.run({ timeout = net.TIMEOUT }, function(s)
            for i = 1, 3 do s:spawn(function() sleep(0.001 * i); served = served + 1 end) end
          end)
          assert(ok, err)
        end, "server")
        root:defer(function() log[#log + 1] = "root ends" end)
      end)
    end)
    assert.same(pack(true), r)
    assert.equal(2, restarts)
    assert.equal(3, served)
    assert.same({
      "sibling 1: cosock.scope: cancelled",
      "restart after: worker failed on attempt 1",
      "sibling 2: cosock.scope: cancelled",
      "restart after: worker failed on attempt 2",
      "sibling 3: cosock.scope: cancelled",
      "subtree done on attempt 3",
      "root ends",
    }, log)
    net.assert_clean()
  end)

  it("a deadline around real socket work ends it and its cleanup closes the socket", function()
    local log = {}
    local r = net.in_task(function()
      local srv, port = net.listen()
      cosock.spawn(function() -- a server that answers too slowly
        local c = srv:accept()
        srv:close()
        pcall(function()
          for i = 1, 100 do
            assert(c:send("line " .. i .. "\n"))
            sleep(0.01)
          end
        end)
        c:close()
      end, "slow server")
      local res = pack(scope.timeout(0.05, function()
        local c = assert(cosock.socket.tcp())
        c:settimeout(net.TIMEOUT)
        local ok, err = pcall(function()
          assert(c:connect("127.0.0.1", port))
          return c:receive("*a") -- more than the deadline allows
        end)
        c:close()
        log[#log + 1] = "client cleanup: " .. tostring(err)
        error(err, 0)
      end))
      return unpack(res, 1, res.n)
    end)
    assert.same(pack(nil, "timeout"), r)
    assert.same({ "client cleanup: cosock.scope: cancelled" }, log)
    net.assert_clean()
  end)

  it("nested deadlines around socket work: the outer one passing ends the inner scope first", function()
    local log = {}
    local r = net.in_task(function()
      local c, s = net.pair()
      local res = pack(scope.timeout(0.03, function()
        local ok, err = scope.run({ timeout = 10 }, function(inner)
          inner:defer(function() log[#log + 1] = "inner deferred" end)
          inner:spawn(function()
            cleanup_logged(log, "reader", c.receive, c)
          end, "reader")
        end)
        log[#log + 1] = "never here: " .. tostring(ok) .. " " .. tostring(err)
      end))
      c:close(); s:close()
      return unpack(res, 1, res.n)
    end)
    assert.same(pack(nil, "timeout"), r)
    assert.same({ "reader: cosock.scope: cancelled", "inner deferred" }, log)
    net.assert_clean()
  end)

  it("s:cancel() ends a receive on a socket another task closed (close does not wake it)", function()
    -- (cosock's close, the default after reset: a close does not wake the reader)
    local log = {}
    local r = net.in_task(function()
      local c, s = net.pair()
      local res = pack(scope.run(function(sc)
        sc:spawn(function()
          cleanup_logged(log, "reader", c.receive, c)
        end, "reader")
        sc:spawn(function()
          sleep(0.005)
          c:close() -- the reader's wait goes on, as on cosock
          sleep(0.005)
          log[#log + 1] = "closer cancels"
          sc:cancel()
        end, "closer")
      end))
      s:close()
      return unpack(res, 1, res.n)
    end)
    assert.same(pack(true), r)
    assert.same({ "closer cancels", "reader: cosock.scope: cancelled" }, log)
    net.assert_clean()
  end)

  it("a lock wait cancelled by handle:cancel() leaves the line; the next waiter gets the lock", function()
    local lock, log = sync.lock(), {}
    local r = net.in_task_virtual(function() -- (sleeps order its tasks)
      return scope.run(function(s)
        s:spawn(function()
          assert(lock:acquire())
          sleep(0.02)
          lock:release()
        end, "holder")
        local waiter = s:spawn(function()
          sleep(0.001)
          cleanup_logged(log, "waiter", lock.acquire, lock)
        end, "waiter")
        s:spawn(function()
          sleep(0.002)
          local ok = lock:acquire(net.TIMEOUT)
          log[#log + 1] = "next: " .. tostring(ok)
          lock:release()
        end, "next")
        sleep(0.005)
        waiter:cancel()
        assert.same(pack(nil, "cancelled"), pack(waiter:join(net.TIMEOUT)))
      end)
    end)
    assert.same(pack(true), r)
    assert.same({ "waiter: cosock.scope: cancelled", "next: true" }, log)
    assert.equal(1, lock:available())
    net.assert_clean()
  end)

  it("a failing child while another holds a lock: the holder is cancelled and the lock freed", function()
    local lock, log = sync.lock(), {}
    local r = net.in_task_virtual(function() -- (sleeps order its tasks)
      local res = pack(scope.run(function(s)
        s:spawn(function()
          assert(lock:acquire())
          cleanup_logged(log, "holder", sleep, 10) -- never releases itself
        end, "holder")
        s:spawn(function() sleep(0.005); error("child failed", 0) end, "failing")
      end))
      log[#log + 1] = "after the scope: " .. tostring(lock:acquire(net.TIMEOUT))
      lock:release()
      return unpack(res, 1, res.n)
    end)
    assert.same(pack(false, "child failed"), pack(r[1], r[2]:match("^[^\n]*")))
    assert.equal(2, r.n)
    assert.same({ "holder: cosock.scope: cancelled", "after the scope: true" }, log)
    net.assert_clean()
  end)

  it("cosock.stop() cancels a scope's tasks with cleanup and run returns", function()
    local log = {}
    net.run_virtual(function() -- (the stopper's sleep orders it)
      cosock.spawn(function()
        local ok, err = pcall(scope.run, function(s)
          for i = 1, 2 do
            s:spawn(function()
              cleanup_logged(log, "child " .. i, function()
                local _, rx = cosock.channel.new()
                rx:receive()
              end)
            end, "child " .. i)
          end
          s:defer(function() log[#log + 1] = "deferred" end)
          sleep(10)
        end)
        log[#log + 1] = "main: " .. tostring(ok) .. " " .. tostring(err)
        sleep(10)
        log[#log + 1] = "main went on"
      end, "main")
      cosock.spawn(function() sleep(0.005); cosock.stop() end, "stopper")
    end)
    assert.same({
      "child 1: cosock.scope: cancelled",
      "child 2: cosock.scope: cancelled",
      "deferred",
      "main: false cosock.scope: cancelled",
    }, log)
    net.assert_clean()
  end)

  describe("TLS #luasec", function()
    local certs
    setup(function() certs = require("spec.support.certs").generate() end)
    teardown(function() certs.cleanup() end)

    it("s:cancel() in the middle of a client's handshake: cleanup closes the socket", function()
      local log = {}
      local r = net.in_task(function()
        local c, s = net.pair() -- the server side never speaks TLS
        local res = pack(scope.run(function(sc)
          sc:spawn(function()
            local tc = assert(cosock.ssl.wrap(c, certs.client_config()))
            local ok, err = pcall(tc.dohandshake, tc)
            tc:close()
            log[#log + 1] = "handshake: " .. tostring(err)
            error(err, 0)
          end, "client")
          sleep(0.01)
          sc:cancel()
        end))
        s:close()
        return unpack(res, 1, res.n)
      end)
      assert.same(pack(true), r)
      assert.same({ "handshake: cosock.scope: cancelled" }, log)
      net.assert_clean()
    end)
  end)
end)
