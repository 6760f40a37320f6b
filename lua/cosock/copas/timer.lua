--- cosock.copas.timer: copas 4.11's timers (copas.timer) on cosock-native.
--- timer.new{delay =, callback = function(timer, params) end [, recurring =]
--- [, params =] [, initial_delay =] [, name =] [, errorhandler =]} -> armed
--- timer; t:arm([initial_delay]) -> t, or nil, "already armed";
--- t:cancel() -> t, or nil, "not armed"|"already cancelled". Each armed
--- timer is a copas thread (named after the timer).
local copas = require "cosock.copas"
local core = require "cosock.core"

local current_task, co_running = core.current_task, coroutine.running
local setmetatable, assert, type, xpcall = setmetatable, assert, type, xpcall

local timer = {}
timer.__index = timer

local count = 0
local function new_name()
  count = count + 1
  return "copas_timer_" .. count
end

local function expire(self, initial_delay)
  if self.errorhandler then copas.seterrorhandler(self.errorhandler) end
  copas.pause(initial_delay)
  while true do
    if not self.cancelled then
      if not self.recurring then
        self.cancelled = true
        self.co = nil
        self:callback(self.params)
        return
      end
      self:callback(self.params)
    end
    if self.cancelled then
      self.co = nil
      self.cancelled = true
      return
    end
    copas.pause(self.delay)
  end
end

function timer:arm(initial_delay)
  assert(initial_delay == nil or initial_delay >= 0, "delay must be greater than or equal to 0")
  if self.co then return nil, "already armed" end
  self.cancelled = false
  self.co = copas.addnamedthread(self.name, expire, self, initial_delay or self.delay)
  return self
end

function timer:cancel()
  if not self.co then return nil, "not armed" end
  if self.cancelled then return nil, "already cancelled" end
  self.cancelled = true
  copas.wakeup(self.co)
  copas.removethread(self.co)
  self.co = nil
  return self
end

-- A callback's error goes to the thread's copas error handler, and the
-- timer goes on.
local function ehandler(err)
  return copas.geterrorhandler()(err, current_task() or co_running(), nil)
end

function timer.new(opts)
  assert((opts.delay or -1) >= 0, "delay must be greater than or equal to 0")
  assert(type(opts.callback) == "function", "expected callback to be a function")
  local cb = opts.callback
  return setmetatable({
    name = opts.name or new_name(),
    delay = opts.delay,
    callback = function(t, params)
      xpcall(function() return cb(t, params) end, ehandler)
    end,
    recurring = not not opts.recurring,
    params = opts.params,
    cancelled = false,
    errorhandler = opts.errorhandler,
  }, timer):arm(opts.initial_delay)
end

return timer
