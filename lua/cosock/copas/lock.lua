--- cosock.copas.lock: copas 4.11's lock (copas.lock) on cosock-native.
--- new([seconds [, not_reentrant]]); lock:get([timeout]) -> wait time, or
--- nil, "timeout"|"destroyed", wait time;
--- lock:release() -> true, or nil, err; lock:destroy(). Waiters are served
--- first come, first served.
local copas = require "cosock.copas"
local core = require "cosock.core"

local gettime = copas.gettime
local current_task, co_running = core.current_task, coroutine.running
local setmetatable, tonumber, tostring, error = setmetatable, tonumber, tostring, error

local function running() return current_task() or co_running() end

local DEFAULT_TIMEOUT = 10

local lock = {}
lock.__index = lock

-- co -> the lock it waits for (for the timeout callback)
local waiting_for = setmetatable({}, { __mode = "kv" })

function lock.new(seconds, not_reentrant)
  local timeout = tonumber(seconds or DEFAULT_TIMEOUT) or -1
  if timeout < 0 then
    error("expected timeout (1st argument) to be a number greater than or equal to 0, got: "
          .. tostring(seconds), 2)
  end
  return setmetatable({
    timeout = timeout,
    not_reentrant = not_reentrant,
    queue = {}, first = 1, last = 0,  -- waiting coroutines (holes where one left)
    owner = nil, call_count = nil,
    errors = setmetatable({}, { __mode = "k" }),
  }, lock)
end

local function destroyed() return nil, "destroyed" end
local destroyed_mt = { __index = function() return destroyed end }

function lock:destroy()
  for i = self.first, self.last do
    local co = self.queue[i]
    if co then
      self.queue[i] = nil
      self.errors[co] = "destroyed"
      copas.wakeup(co)
    end
  end
  if self.owner then self.errors[self.owner] = "destroyed" end
  self.queue, self.first, self.last = {}, 1, 0
  self.destroyed = true
  setmetatable(self, destroyed_mt)
  return true
end

local function on_timeout(co)
  local self = waiting_for[co]
  if not self then return end
  for i = self.first, self.last do
    if self.queue[i] == co then
      self.queue[i] = nil
      self.errors[co] = "timeout"
      copas.wakeup(co)
      return
    end
  end
end

function lock:get(timeout)
  local co = running()
  local start_time
  if self.owner then
    if co == self.owner and not self.not_reentrant then
      self.call_count = self.call_count + 1
      return 0
    end
    -- (a thread asking again for a lock that is not re-entrant waits for
    -- itself: it gets "timeout", as on copas)
    timeout = timeout or self.timeout
    if timeout == 0 then return nil, "timeout", 0 end
    self.last = self.last + 1
    self.queue[self.last] = co
    waiting_for[co] = self
    copas.timeout(timeout, on_timeout)
    start_time = gettime()
    copas.pauseforever()
    local err = self.errors[co]
    self.errors[co] = nil
    waiting_for[co] = nil
    if err ~= "timeout" then copas.timeout(0) end
    if err then return nil, err, gettime() - start_time end
  end
  self.owner = co
  self.call_count = 1
  return start_time and (gettime() - start_time) or 0
end

function lock:release()
  local co = running()
  if co ~= self.owner then return nil, "cannot release a lock not owned" end
  self.call_count = self.call_count - 1
  if self.call_count > 0 then return true end
  while self.first <= self.last do
    local i = self.first
    local nxt = self.queue[i]
    self.queue[i] = nil
    self.first = i + 1
    if nxt then
      self.owner = nxt
      copas.wakeup(nxt)
      return true
    end
  end
  self.owner = nil
  self.first, self.last = 1, 0
  return true
end

return lock
