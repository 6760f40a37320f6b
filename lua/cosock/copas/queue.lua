--- cosock.copas.queue: copas 4.11's queue (copas.queue) on cosock-native.
--- Queue.new([opts]) (or Queue:new()); q:push(item) -> true, or nil,
--- "stopping"|"destroyed"; q:pop([timeout]) -> item, or nil, "timeout"|
--- "destroyed"; get_size(), stop(), finish([timeout [, no_destroy_on_timeout]]),
--- destroy(), add_worker(fn) -> coroutine, get_workers(). Items may be nil.
local copas = require "cosock.copas"
local Sema = require "cosock.copas.semaphore"
local Lock = require "cosock.copas.lock"

local gettime = copas.gettime
local setmetatable, assert, type, next, pairs, max = setmetatable, assert, type, next, pairs, math.max
local huge = math.huge

local Queue = {}
Queue.__index = Queue

local count = 0
local function new_name()
  count = count + 1
  return "copas_queue_" .. count
end

function Queue.new(opts)
  opts = opts or {}
  return setmetatable({
    name = opts.name or new_name(),
    sema = Sema.new(10 ^ 9),
    head = 1, tail = 1, list = {},
    workers = setmetatable({}, { __mode = "k" }),
    stopping = false,
    worker_id = 0,
    exit_semaphore = Sema.new(10 ^ 9),
  }, Queue)
end

-- (push and pop do what sema:give() and sema:take(1) do when nobody waits,
-- inline: they run for every item.)
function Queue:push(item)
  if self.stopping then return nil, "stopping" end
  local head = self.head
  self.list[head] = item
  self.head = head + 1
  local sema = self.sema
  local n = sema.count
  if sema.first > sema.last and n < sema.max and not sema.destroyed then
    sema.count = n + 1
  else
    sema:give()
  end
  return true
end

-- The item at the tail, once the semaphore gave one.
local function take_item(self)
  local list, tail = self.list, self.tail
  local item = list[tail]
  list[tail] = nil
  tail = tail + 1
  if tail == self.head then
    self.head, self.tail = 1, 1 -- (every slot is nil again)
    if self.stopping then self:destroy() end
  else
    self.tail = tail
  end
  return item
end

function Queue:pop(timeout)
  local sema = self.sema
  local n = sema.count
  if sema.first > sema.last and n >= 1 and not sema.destroyed then
    sema.count = n - 1
  else
    local ok, err = sema:take(1, timeout)
    if not ok then return ok, err end
  end
  return take_item(self)
end

function Queue:get_size()
  return self.head - self.tail
end

function Queue:stop()
  if not self.stopping then
    self.stopping = true
    self.lock = Lock.new(nil, true)
    self.lock:get()
    if self:get_size() == 0 then self:destroy() end
  end
  return true
end

function Queue:finish(timeout, no_destroy_on_timeout)
  self:stop()
  timeout = timeout or self.lock.timeout
  local endtime = gettime() + timeout
  local _, err = self.lock:get(timeout)
  if err == "timeout" then
    if not no_destroy_on_timeout then self:destroy() end
    return nil, err
  end
  -- the lock was destroyed: the queue ran empty; now the workers must end
  if not next(self.workers) then return true end
  while true do
    local _, e = self.exit_semaphore:take(1, max(0, endtime - gettime()))
    if e == "destroyed" then return true end
    if e == "timeout" then
      if not no_destroy_on_timeout then self:destroy() end
      return nil, "timeout"
    end
    if not next(self.workers) then
      self.exit_semaphore:destroy()
      return true
    end
  end
end

local function destroyed() return nil, "destroyed" end
local destroyed_mt = { __index = function() return destroyed end }

function Queue:destroy()
  if self.lock then self.lock:destroy() end
  self.sema:destroy()
  setmetatable(self, destroyed_mt)
  for k in pairs(self.list) do self.list[k] = nil end
  return true
end

function Queue:add_worker(worker)
  assert(type(worker) == "function", "expected worker to be a function")
  self.worker_id = self.worker_id + 1
  local coro
  local sema = self.sema
  coro = copas.addnamedthread(self.name .. ":worker_" .. self.worker_id, function()
    while true do
      -- (pop(math.huge), its usual case inline: this runs for every item)
      local n = sema.count
      if sema.first > sema.last and n >= 1 and not sema.destroyed then
        sema.count = n - 1
        worker(take_item(self))
      else
        local item, err = self:pop(huge)
        if err then break end
        worker(item)
      end
    end
    self.workers[coro] = nil
    if self.exit_semaphore then self.exit_semaphore:give(1) end
  end)
  self.workers[coro] = true
  return coro
end

function Queue:get_workers()
  local lst = {}
  for coro in pairs(self.workers) do
    if coroutine.status(coro) ~= "dead" then lst[#lst + 1] = coro end
  end
  return lst
end

return Queue
