--- cosock.copas.semaphore: copas 4.11's semaphore (copas.semaphore) on
--- cosock-native. new(max [, start [, seconds]]); sema:take([n [, timeout]])
--- -> true, or nil, "timeout"|"too many"|"destroyed"; sema:give([n]) -> true,
--- or nil, "too many" (capped at max); get_count(), get_wait(), destroy().
--- Waiters are served first come, first served.
local copas = require "cosock.copas"
local core = require "cosock.core"

local current_task, co_running = core.current_task, coroutine.running
local setmetatable, tonumber, tostring, type, error = setmetatable, tonumber, tostring, type, error
local huge = math.huge

local function running() return current_task() or co_running() end

local DEFAULT_TIMEOUT = 10

local semaphore = {}
semaphore.__index = semaphore

local waiting_on = setmetatable({}, { __mode = "kv" }) -- co -> semaphore

function semaphore.new(max, start, seconds)
  local timeout = tonumber(seconds or DEFAULT_TIMEOUT) or -1
  if timeout < 0 then
    error("expected timeout (2nd argument) to be a number greater than or equal to 0, got: "
          .. tostring(seconds), 2)
  end
  if type(max) ~= "number" or max < 1 then
    error("expected max resources (1st argument) to be a number greater than 0, got: "
          .. tostring(max), 2)
  end
  return setmetatable({
    count = start or 0, max = max, timeout = timeout,
    queue = {}, first = 1, last = 0,        -- { co =, requested = } (holes where one left)
    timed_out = setmetatable({}, { __mode = "k" }),
  }, semaphore)
end

local function destroyed() return nil, "destroyed" end
local destroyed_mt = { __index = function() return destroyed end }

function semaphore:destroy()
  self.destroyed = true
  for i = self.first, self.last do
    local item = self.queue[i]
    self.queue[i] = nil
    if item then copas.wakeup(item.co) end
  end
  self.queue, self.first, self.last = {}, 1, 0
  self.count = self.max
  setmetatable(self, destroyed_mt)
  return true
end

function semaphore:give(given)
  local err
  local count = self.count + (given or 1)
  if count > self.max then
    count = self.max
    err = "too many"
  end
  if self.first > self.last then -- nobody waits (the usual case): no more to do
    self.count = count
    if err then return nil, err end
    return true
  end
  while self.first <= self.last do
    local i = self.first
    local item = self.queue[i]
    if item == nil then
      self.first = i + 1
    elseif count >= item.requested then
      self.queue[i] = nil
      self.first = i + 1
      count = count - item.requested
      copas.wakeup(item.co)
    else
      break
    end
  end
  if self.first > self.last then self.first, self.last = 1, 0 end -- (its slots are nil)
  self.count = count
  if err then return nil, err end
  return true
end

local function on_timeout(co)
  local self = waiting_on[co]
  if not self then return end
  for i = self.first, self.last do
    local item = self.queue[i]
    if item and item.co == co then
      self.queue[i] = nil
      self.timed_out[co] = true
      copas.wakeup(co)
      return
    end
  end
end

function semaphore:take(requested, timeout)
  requested = requested or 1
  if self.first > self.last and self.count >= requested then
    self.count = self.count - requested
    return true
  end
  if requested > self.max then return nil, "too many" end
  local to = timeout or self.timeout
  if to == 0 then return nil, "timeout" end
  local co = running()
  self.timed_out[co] = nil
  waiting_on[co] = self
  if to ~= huge then copas.timeout(to, on_timeout) end
  self.last = self.last + 1
  self.queue[self.last] = { co = co, requested = requested }
  copas.pauseforever()
  waiting_on[co] = nil
  if self.timed_out[co] then
    self.timed_out[co] = nil
    return nil, "timeout"
  end
  if to ~= huge then copas.timeout(0) end
  if self.destroyed then return nil, "destroyed" end
  return true
end

function semaphore:get_count()
  return self.count
end

function semaphore:get_wait()
  local wait = 0
  for i = self.first, self.last do
    local item = self.queue[i]
    if item then wait = wait + item.requested end
  end
  return wait - self.count
end

return semaphore
