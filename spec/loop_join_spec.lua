-- handle:join([timeout]): waits in a task for another task to end.
-- true, ... when it returned; false, err when it raised; nil, "cancelled";
-- nil, "timeout". Handles can be waited on with select (readable once the
-- task ended). (Not in cosock 0.2.0: an addition.)

local cosock = require "cosock"
local L = require "spec.support.loop"
local net = require "spec.support.net"
local compat = require "cosock.compat"
local V = require "spec.support.version"

local function pack(...) return compat.pack(...) end

describe("handle:join", function()
  before_each(function()
    cosock.reset()
  end)

  it("returns true and every value the task returned, nils and count kept", function()
    local r
    local h = cosock.spawn(function() L.pass(); return 1, nil, "three", nil end, "worker")
    cosock.spawn(function() r = pack(h:join()) end, "joiner")
    cosock.run()
    assert.same({ n = 5, true, 1, nil, "three", nil }, r)
    L.assert_clean()
  end)

  it("returns at once for a task that already ended, as often as asked", function()
    local r = {}
    local h = cosock.spawn(function() return "done" end, "quick")
    cosock.spawn(function()
      L.passes(2)
      r[1] = pack(h:join())
      r[2] = pack(h:join(0))
    end, "late joiner")
    cosock.run()
    assert.same({ n = 2, true, "done" }, r[1])
    assert.same({ n = 2, true, "done" }, r[2])
    L.assert_clean()
  end)

  it("returns true alone for a task that returned nothing, before and after it ended", function()
    -- (kept without a table: handle.c's outcome for the common ending)
    local r = {}
    local h = cosock.spawn(function() L.pass() end, "silent")
    local f = cosock.spawn(function() L.pass(); return false end, "false")
    cosock.spawn(function()
      r[1] = pack(h:join())
      L.passes(2)
      r[2] = pack(h:join(0))
      r[3] = pack(f:join())
      r[4] = pack(f:join())
    end, "joiner")
    cosock.run()
    assert.same({ n = 1, true }, r[1])
    assert.same({ n = 1, true }, r[2])
    assert.same({ n = 2, true, false }, r[3])
    assert.same({ n = 2, true, false }, r[4])
    L.assert_clean()
  end)

  it("returns false and the error, with or without an error handler", function()
    local r, handled = {}, nil
    local h = cosock.spawn(function() L.pass(); error("broke") end, "failer")
    cosock.spawn(function() r.a = pack(h:join()) end, "joiner")
    local ok, raised = pcall(cosock.run)       -- no handler: the error ends run
    assert.is_false(ok)
    cosock.run()                               -- the joiner still gets it
    assert.same({ n = 2, false, L.loop_error(raised) }, r.a)
    cosock.reset()
    cosock.set_error_handler(function(err) handled = err end)
    local obj = {}
    h = cosock.spawn(function() L.pass(); error(obj) end, "failer")
    cosock.spawn(function() r.b = pack(h:join()) end, "joiner")
    cosock.run()
    assert.is_false(r.b[1])
    assert.is_true(rawequal(obj, r.b[2]))
    assert.is_true(rawequal(obj, handled))
    L.assert_clean()
  end)

  it("returns nil, 'cancelled' for a task cancelled before or while it is joined", function()
    local r = {}
    local early = cosock.spawn(function() L.passes(100) end, "early")
    early:cancel()
    local late = cosock.spawn(function() cosock.socket.sleep(5) end, "late")
    cosock.spawn(function() r.early = pack(early:join()) end, "j1")
    cosock.spawn(function() r.late = pack(late:join()) end, "j2")
    cosock.spawn(function() L.passes(2); late:cancel() end, "canceller")
    cosock.run()
    assert.same({ n = 2, nil, "cancelled" }, r.early)
    assert.same({ n = 2, nil, "cancelled" }, r.late)
    L.assert_clean()
  end)

  it("returns nil, 'timeout' when the timeout passes first; a later join still works", function()
    local r = {}
    -- (the slow task ends when the joiner lets it, not after a time that a
    -- loaded machine could let pass between the joins)
    local tx, rx = cosock.channel.new()
    local h = cosock.spawn(function() rx:receive(); return "late" end, "slow")
    cosock.spawn(function()
      r[1] = pack(h:join(0.001))
      r[2] = pack(h:join(0))
      tx:send("go")
      r[3] = pack(h:join(5))
    end, "joiner")
    cosock.run()
    assert.same({ n = 2, nil, "timeout" }, r[1])
    assert.same({ n = 2, nil, "timeout" }, r[2])
    assert.same({ n = 2, true, "late" }, r[3])
    L.assert_clean()
  end)

  it("lets any number of tasks join one task", function()
    local got = {}
    local h = cosock.spawn(function() L.passes(3); return "shared" end, "target")
    for i = 1, 20 do
      cosock.spawn(function() got[i] = select(2, h:join()) end, "joiner" .. i)
    end
    cosock.run()
    for i = 1, 20 do assert.equal("shared", got[i], "joiner " .. i) end
    L.assert_clean()
  end)

  it("works from a coroutine whose yields the task forwards", function()
    local r
    local h = cosock.spawn(function() L.passes(2); return 5 end, "target")
    cosock.spawn(function() r = pack(net.forwarding(function() return h:join(5) end)) end, "fwd")
    cosock.run()
    assert.same({ n = 2, true, 5 }, r)
    L.assert_clean()
  end)

  it("refuses to join the calling task itself", function()
    local err
    local h
    h = cosock.spawn(function() err = select(2, pcall(h.join, h)) end, "self")
    cosock.run()
    assert.has.match("cosock: a task cannot join itself", err)
    L.assert_clean()
  end)

  it("refuses to run outside a task, even for a task that ended", function()
    local h = cosock.spawn(function() return 1 end, "t")
    assert.has.error_match(function() h:join() end, "cosock: join must be called from a task")
    cosock.run()
    assert.has.error_match(function() h:join() end, "cosock: join must be called from a task")
    L.assert_clean()
  end)

  it("checks its timeout", function()
    local errs = {}
    local h = cosock.spawn(function() L.pass() end, "t")
    cosock.spawn(function()
      errs[1] = select(2, pcall(h.join, h, "soon"))
      errs[2] = select(2, pcall(h.join, h, 0 / 0))
    end, "joiner")
    cosock.run()
    assert.has.match("bad argument #1 to 'join' %(number or nil expected, got string%)", errs[1])
    assert.has.match("bad argument #1 to 'join' %(timeout is NaN%)", errs[2])
    assert.has.error_match(function() h.join({}) end, "bad self to 'join' %(thread handle expected, got table%)")
    L.assert_clean()
  end)

  it("sees a task fail whose results the loop has no room to keep, and run raises that error", function()
    -- More results than the loop's stack takes (LuaJIT and PUC 5.1 allow
    -- 8,000 slots to a C function, the others a million), fewer than the
    -- task's own stack holds.
    local n = (V.jit or V.puc51) and 7990 or 999960
    local unpack = compat.unpack
    local r
    local h = cosock.spawn(function()
      L.pass()
      local t = {}
      for i = 1, n do t[i] = i end
      return unpack(t, 1, n)
    end, "big")
    cosock.spawn(function() r = pack(h:join()) end, "joiner")
    local ok, err = pcall(cosock.run)
    assert.is_false(ok)
    assert.truthy(L.has(err, "out of memory (keeping a task's results)"), tostring(err))
    cosock.run()                                   -- (the joiner, woken, ends)
    assert.equal(false, r[1])
    assert.truthy(L.has(r[2], "out of memory (keeping a task's results)"), tostring(r[2]))
    L.assert_clean()
  end)

  it("says 'cancelled' for a task a reset forgot", function()
    local h = cosock.spawn(function() cosock.socket.sleep(5) end, "forgotten")
    cosock.reset()
    local r
    cosock.spawn(function() r = pack(h:join()) end, "joiner")
    cosock.run()
    assert.same({ n = 2, nil, "cancelled" }, r)
    L.assert_clean()
  end)

  it("keeps results only while the handle can be read: a dropped handle frees them", function()
    local probe = setmetatable({}, { __mode = "v" })
    cosock.spawn(function()
      local big = { "result" }
      probe[1] = big
      return big
    end, "nobody joins me")
    local kept = cosock.spawn(function() local v = { "kept" }; probe[2] = v; return v end, "kept")
    cosock.run()
    collectgarbage(); collectgarbage()
    assert.is_nil(probe[1])                    -- its handle is gone: so is its result
    assert.is_not_nil(probe[2])                -- still joinable through `kept`
    local r
    cosock.spawn(function() r = select(2, kept:join()) end, "joiner")
    cosock.run()
    assert.is_true(rawequal(probe[2], r))
    L.assert_clean()
  end)
end)

describe("a thread handle in select", function()
  before_each(function()
    cosock.reset()
  end)

  it("is readable once its task ended, and not before", function()
    local r = {}
    local h = cosock.spawn(function() L.passes(3) end, "target")
    cosock.spawn(function()
      r.before = pack(cosock.socket.select({ h }, nil, 0))
      r.after = pack(cosock.socket.select({ h }, nil, 5))
      r.again = pack(cosock.socket.select({ h }, nil, 5)) -- ended: at once
    end, "selector")
    cosock.run()
    assert.same({ n = 3, nil, nil, "timeout" }, r.before)
    assert.equal(1, #r.after[1])
    assert.is_true(rawequal(h, r.after[1][1]))
    assert.is_true(rawequal(h, r.again[1][1]))
    L.assert_clean()
  end)

  it("wakes several selecting tasks at once", function()
    local woke = 0
    local h = cosock.spawn(function() L.passes(2) end, "target")
    for i = 1, 5 do
      cosock.spawn(function()
        local recvr = cosock.socket.select({ h }, nil, 5)
        if recvr and recvr[1] == h then woke = woke + 1 end
      end, "sel" .. i)
    end
    cosock.run()
    assert.equal(5, woke)
    L.assert_clean()
  end)

  it("speaks only the recvr kind of the waker protocol", function()
    local h = cosock.spawn(function() end, "t")
    assert.has.error_match(function() h:setwaker("sendr", function() end) end,
      "unsupported wake kind: sendr")
    cosock.run()
    L.assert_clean()
  end)
end)
