-- Regression: cosock.get_thread_metadata(), cosock.tasks.list() and dump()
-- (and the unwakeable warning's idle check) build a table per task, and any
-- of those allocations may run a finalizer. One that reset the loop (from
-- the main program) freed the tasks the listing went on reading
-- (heap-use-after-free under ASan); one that cancelled a task or spawned one
-- (inside run) left the listing reading a task that was no longer the one
-- it began with. Each listing now reads a task's fields before anything that
-- may run a finalizer and looks the task up again after each such call: a
-- task gone meanwhile is left out.

local cosock = require "cosock"
local tasks = require "cosock.tasks"

local finalizer_inside = require("spec.support.finalizer").inside

local function sleepers(n, prefix)
  local hs = {}
  for i = 1, n do hs[i] = cosock.spawn(function() cosock.socket.sleep(10) end, prefix .. i) end
  return hs
end

-- Every entry of a listing names a task that was alive with that name.
local NAMES = { lister = true, ["spawned by a finalizer"] = true }
for i = 1, 6 do NAMES["sleeper" .. i] = true end
local function assert_entries(list, field)
  for _, e in ipairs(list) do
    if not NAMES[e[field]] then error("an entry names no task: " .. tostring(e[field])) end
  end
end

local LISTINGS = {
  ["cosock.get_thread_metadata()"] = function()
    local list = cosock.get_thread_metadata()
    for _, e in ipairs(list) do assert(type(e.traceback) == "string" and e.status ~= nil) end
    return list, "name"
  end,
  ["cosock.tasks.list()"] = function()
    local list = tasks.list()
    for _, e in ipairs(list) do assert(type(e.co) == "thread" and type(e.state) == "string") end
    return list, "name"
  end,
  ["cosock.tasks.dump()"] = function()
    local out = {}
    tasks.dump(function(s) out[#out + 1] = s end)
    return { table.concat(out) }, nil
  end,
}

describe("regress: a finalizer changes the tasks while they are listed", function()
  before_each(function() cosock.reset() end)
  after_each(function()
    collectgarbage()
    cosock.reset()
  end)

  for what, listing in pairs(LISTINGS) do
    it(what .. " with a reset inside (from the main program)", function()
      local hits, results = finalizer_inside(30, cosock.reset, listing, function()
        cosock.reset()
        sleepers(6, "sleeper")
      end)
      assert.is_true(hits >= 30)
      for _, r in ipairs(results) do
        assert.is_true(r[1], r[2])
      end
      cosock.reset()
      local ran = false
      cosock.spawn(function() ran = true end)
      cosock.run()
      assert.is_true(ran)
    end)

    it(what .. " from a task, with tasks cancelled and spawned inside", function()
      local hits, results
      cosock.spawn(function()
        local hs
        local spawn = false
        hits, results = finalizer_inside(30, function()
          spawn = not spawn
          if spawn then cosock.spawn(function() end, "spawned by a finalizer") end
          for _, h in ipairs(hs) do h:cancel() end
        end, function()
          local list, field = listing()
          if field then assert_entries(list, field) end
          return list
        end, function()
          if hs then for _, h in ipairs(hs) do h:cancel() end end
          hs = sleepers(6, "sleeper")
          cosock.socket.sleep(0)               -- (they wait now)
        end)
        for _, h in ipairs(hs) do h:cancel() end
      end, "lister")
      cosock.run()
      assert.is_true(hits >= 30)
      for _, r in ipairs(results) do assert.is_true(r[1], r[2]) end
      assert.are.equal(0, cosock.stats().tasks)
    end)
  end
end)
