-- Conformance: cosock.get_thread_metadata().

local cosock = require "cosock"
local L = require "spec.support.loop"

local function by_name(info)
  local out = {}
  for _, entry in ipairs(info) do
    local key = entry.name
    if key == nil then key = "<nil>" end
    assert(out[key] == nil, "two entries named " .. tostring(key))
    out[key] = entry
  end
  return out
end

describe("get_thread_metadata", function()
  before_each(function()
    cosock.reset()
  end)

  it("returns one entry per live thread with the documented fields", function()
    local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
    local info
    local t0 = os.time()
    local parked = cosock.spawn(function() L.yield({ a, b }, { c }, 30) end, "parked")
    local sleeper = cosock.spawn(function() L.yield(nil, nil, 20) end, "sleeper")
    cosock.spawn(function()
      L.wait_until(function() return c:has_waker("sendr") and L.stats().timers >= 2 end, "park")
      info = cosock.get_thread_metadata()
      parked:cancel()
      sleeper:cancel()
    end, "capture")
    cosock.run()
    local t1 = os.time()
    assert.equal("table", type(info))
    assert.equal(3, #info)
    local m = by_name(info)

    local p = m.parked
    assert.is_not_nil(p)
    assert.equal("parked", p.name)
    assert.equal("string", type(p.traceback))
    assert.is_true(L.has(p.traceback, "stack traceback"), p.traceback)
    assert.equal(2, p.recvt)
    assert.equal(1, p.sendt)
    assert.equal(30, p.timeout)
    assert.equal("suspended", p.status)
    assert.equal("number", type(p.last_wake))
    assert.is_true(p.last_wake >= t0 and p.last_wake <= t1)

    local s = m.sleeper
    assert.is_not_nil(s)
    assert.equal(0, s.recvt)
    assert.equal(0, s.sendt)
    assert.equal(20, s.timeout)
    assert.equal("suspended", s.status)
    assert.equal("number", type(s.last_wake))

    local me = m.capture
    assert.is_not_nil(me)
    assert.equal("running", me.status)
    assert.equal("number", type(me.last_wake))
    assert.equal("string", type(me.traceback))
    L.assert_clean()
  end)

  it("a task that was never resumed has last_wake 'unknown' and no wait", function()
    local info
    local child
    cosock.spawn(function()
      child = cosock.spawn(function() end, "young")
      info = cosock.get_thread_metadata()
    end, "parent")
    cosock.run()
    local m = by_name(info)
    assert.is_not_nil(m.young)
    assert.equal("unknown", m.young.last_wake)
    assert.equal("suspended", m.young.status)
    assert.equal(0, m.young.recvt)
    assert.equal(0, m.young.sendt)
    assert.is_nil(m.young.timeout)
    assert.equal("running", m.parent.status)
    assert.is_false(child:is_alive())
    L.assert_clean()
  end)

  it("the calling task sees the wait it was last resumed from (timeout of its last sleep)", function()
    local mine
    cosock.spawn(function()
      L.yield(nil, nil, 0.01)
      mine = by_name(cosock.get_thread_metadata()).me
    end, "me")
    cosock.run()
    assert.is_not_nil(mine)
    assert.equal(0.01, mine.timeout)
    assert.equal(0, mine.recvt)
    assert.equal(0, mine.sendt)
    assert.equal("running", mine.status)
    L.assert_clean()
  end)

  it("through cosock.socket.sleep, the last sleep's timeout is reported", function()
    local mine
    cosock.spawn(function()
      cosock.socket.sleep(0.02)
      mine = by_name(cosock.get_thread_metadata()).me
    end, "me")
    cosock.run()
    assert.equal(0.02, mine.timeout)
    L.assert_clean()
  end)

  it("the wait counts are those of the last yield even after it was woken", function()
    local a, b, c = L.obj("a"), L.obj("b"), L.obj("c")
    local mine, seen_by_other
    cosock.spawn(function()
      L.yield({ a, b }, { c })
      mine = by_name(cosock.get_thread_metadata()).waiter
    end, "waiter")
    cosock.spawn(function()
      L.wait_until(function() return c:has_waker("sendr") end, "park")
      a:fire()
      -- woken but not yet resumed: still the counts of its last yield
      seen_by_other = by_name(cosock.get_thread_metadata()).waiter
    end, "waker")
    cosock.run()
    assert.equal(2, mine.recvt)
    assert.equal(1, mine.sendt)
    assert.is_nil(mine.timeout)
    assert.equal("running", mine.status)
    assert.equal(2, seen_by_other.recvt)
    assert.equal(1, seen_by_other.sendt)
    assert.equal("suspended", seen_by_other.status)
    L.assert_clean()
  end)

  it("counts and timeout follow each new yield", function()
    local a, b = L.obj("a"), L.obj("b")
    local snaps = {}
    local waiter = cosock.spawn(function()
      L.yield({ a }, nil, 40)
      L.yield(nil, { a, b }, 50)
      L.yield(nil, nil, 60)
    end, "w")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker("recvr") end, "first wait")
      snaps[1] = by_name(cosock.get_thread_metadata()).w
      a:fire("recvr")
      L.wait_until(function() return b:has_waker("sendr") end, "second wait")
      snaps[2] = by_name(cosock.get_thread_metadata()).w
      b:fire("sendr")
      -- the waiter is resumed in the next pass and parks on its third wait
      L.passes(3)
      snaps[3] = by_name(cosock.get_thread_metadata()).w
      waiter:cancel()
    end, "observer")
    cosock.run()
    assert.same({ 1, 0, 40 }, { snaps[1].recvt, snaps[1].sendt, snaps[1].timeout })
    assert.same({ 0, 2, 50 }, { snaps[2].recvt, snaps[2].sendt, snaps[2].timeout })
    assert.same({ 0, 0, 60 }, { snaps[3].recvt, snaps[3].sendt, snaps[3].timeout })
    L.assert_clean()
  end)

  it("finished and cancelled threads are not listed", function()
    local a = L.obj("a")
    local info
    local victim = cosock.spawn(function() L.yield({ a }) end, "victim")
    cosock.spawn(function() end, "quick")
    cosock.spawn(function()
      L.wait_until(function() return a:has_waker() end, "park")
      victim:cancel()
      L.pass()
      info = cosock.get_thread_metadata()
    end, "observer")
    cosock.run()
    assert.equal(1, #info)
    assert.equal("observer", info[1].name)
    L.assert_clean()
  end)

  it("an unnamed thread has a nil name", function()
    local info
    cosock.spawn(function() info = cosock.get_thread_metadata() end)
    cosock.run()
    assert.equal(1, #info)
    assert.is_nil(info[1].name)
    assert.equal("running", info[1].status)
    L.assert_clean()
  end)

  it("lists every one of many parked threads", function()
    local objs, hs = {}, {}
    for i = 1, 100 do
      objs[i] = L.obj(i)
      hs[i] = cosock.spawn(function() L.yield({ objs[i] }) end, "p" .. i)
    end
    local info
    cosock.spawn(function()
      L.wait_until(function() return objs[100]:has_waker() and objs[1]:has_waker() end, "park")
      info = cosock.get_thread_metadata()
      for i = 1, 100 do hs[i]:cancel() end
    end, "observer")
    cosock.run()
    assert.equal(101, #info)
    local m = by_name(info)
    for i = 1, 100 do
      assert.is_not_nil(m["p" .. i])
      assert.equal(1, m["p" .. i].recvt)
    end
    L.assert_clean()
  end)

  it("reports the timeout as yielded, even when it is larger than the clamp", function()
    local info
    local h = cosock.spawn(function() L.yield(nil, nil, math.huge) end, "huge")
    cosock.spawn(function()
      L.pass()
      info = by_name(cosock.get_thread_metadata())
      h:cancel()
    end, "observer")
    cosock.run()
    assert.equal(math.huge, info.huge.timeout)
    L.assert_clean()
  end)

  it("works outside run: spawned tasks are listed, never resumed", function()
    cosock.spawn(function() end, "pending")
    local info = cosock.get_thread_metadata()
    assert.equal(1, #info)
    assert.equal("pending", info[1].name)
    assert.equal("suspended", info[1].status)
    assert.equal("unknown", info[1].last_wake)
    cosock.run()
    assert.equal(0, #cosock.get_thread_metadata())
    L.assert_clean()
  end)
end)
