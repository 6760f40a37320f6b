-- predicates.lua: schedlua's predicate and signal test programs (of its
-- predicates and alarms and of its kernel),
-- translated to cosock.when and cosock.signal.
--
-- Shows: a counter task that raises a signal per number (signal.one) and one
-- for every listener when it is done (signal.all); tasks waiting on
-- predicates over the counter (when.wait), one reacting to every multiple of
-- five, a when(), a whenever() that ends when its predicate returns nil, a
-- task waiting for one numbered signal, and three signal.on handlers. The
-- loop evaluates the predicates once per pass; nothing polls.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh predicates
-- It prints (the order is fixed: one number per pass):
--   every 5: 5, 10, ..., 100 on one line each ("!! matched 5 !! at N")
--   PASSED: 12!!   (between 10 and 15)
--   reached 15!!   (signal "counter15")
--   PASSED: 50!!
--   WHEN IDX == 75!!
--   WHEN IDX >= 100: the counter is done
--   counter done: signal.all woke 3
--   finished: counter-1, finished: counter-2, finished: counter-3 (a line each)
--   == EVERY 2 == seen 50 times; run() returned

local cosock = require "cosock"
local signal, when = cosock.signal, cosock.when

local idx, maxidx = 0, 100

-- schedlua's yield: let the other tasks run (one pass).
local function yield() cosock.socket.sleep(0) end

local function numbers(ending)
  return function()
    idx = idx + 1
    if idx > ending then return nil end
    return idx
  end
end

local function counter(name, n)
  for num in numbers(n) do
    signal.one(name .. tostring(num))
    yield()
  end
  print(("counter done: signal.all woke %d"):format(signal.all(name .. "-finished")))
end

local function predCount(num)
  when.wait(function() return idx > num end)
  print(("PASSED: %d!!"):format(num))
end

local function every5()
  while idx <= maxidx do
    when.wait(function() return idx % 5 == 0 end)
    print("!! matched 5 !! at " .. idx)
    yield()
  end
end

local evens = 0

local function main()
  cosock.spawn(function() counter("counter", maxidx) end, "counter")
  when.whenever(function()
    if idx > maxidx then return nil end
    return idx % 2 == 0
  end, function() evens = evens + 1 end)
  cosock.spawn(function() predCount(12) end, "predCount 12")
  cosock.spawn(every5, "every5")
  cosock.spawn(function() predCount(50) end, "predCount 50")
  when.when(function() return idx == 75 end, function() print("WHEN IDX == 75!!") end)
  when.when(function() return idx >= maxidx end, function() print("WHEN IDX >= 100: the counter is done") end)
  cosock.spawn(function() signal.wait("counter15") print("reached 15!!") end, "lambda")
  for i = 1, 3 do
    signal.on("counter-finished", function() print("finished: counter-" .. i) end)
  end
end

cosock.spawn(main, "main")
cosock.run()
print(("== EVERY 2 == seen %d times; run() returned"):format(evens))
