-- cosock.scope: a task's error names the task and shows its own stack, in
-- what scope.run returns and what join returns, as run() shows a plain task's
-- error ("(in task 'name', spawned at file:line)"); s:results() gathers the
-- tasks' results in spawn order. doc/reference.md#module-cosockscope.

local cosock = require "cosock"
local scope = require "cosock.scope"
local net = require "spec.support.net"
local compat = require "cosock.compat"

local pack = compat.pack
local pcall = compat.pcall
local sleep = cosock.socket.sleep
local HERE = "spec/scope_errors_spec.lua"

local function lines_of(text)
  local t = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = line end
  return t
end

-- The line of this file where the call to line_here() is.
local function line_here() return debug.getinfo(2, "l").currentline end

describe("cosock.scope errors", function()
  before_each(function() cosock.reset() end)

  it("scope.run's error and join's name the task, its spawn site and the line that raised", function()
    local raised_at, spawned_at
    local r = net.in_task(function()
      local h
      local ok, err = scope.run(function(s)
        spawned_at = line_here() + 1
        h = s:spawn(function()
          local t
          raised_at = line_here() + 1
          return t.x
        end, "parser")
      end)
      return ok, err, pack(h:join())
    end)
    assert.is_false(r[1])
    local lines = lines_of(r[2])
    assert.matches("^" .. HERE .. ":" .. raised_at .. ": attempt to index", lines[1])
    assert.equal("stack traceback:", lines[2])
    assert.matches("^\t" .. HERE .. ":" .. raised_at .. ": in ", lines[3])
    assert.equal("\t(in task 'parser', spawned at " .. HERE .. ":" .. spawned_at .. ")", lines[#lines])
    assert.is_nil(r[2]:find("scope.lua", 1, true))       -- none of the scope's own frames
    assert.is_nil(r[2]:find("xpcall", 1, true))
    -- join gives the same text: the loop adds no traceback of its own
    assert.same(pack(false, r[2]), r[3])
  end)

  it("an error() of the user's: the stack from the function that called error, no [C] frame", function()
    local r = net.in_task(function()
      local function parse() error("bad input") end
      return scope.run(function(s)
        s:spawn(function() sleep(0); parse() end)
      end)
    end)
    local lines = lines_of(r[2])
    assert.matches(": bad input$", lines[1])
    assert.matches("in %a* ?%a* ?'?parse'?", lines[3])    -- ("in local 'parse'", "in function 'parse'", "in upvalue 'parse'")
    assert.is_nil(r[2]:find("[C]: in function 'error'", 1, true))
    assert.matches("^\t%(in an unnamed task, spawned at " .. HERE .. ":%d+%)$", lines[#lines])
  end)

  it("keeps values that are not strings, and the cancellation, as they are", function()
    local value = { code = 7 }
    local r = net.in_task(function()
      local h2
      local ok, err = scope.run(function(s)
        s:spawn(function() sleep(0); error(value) end, "table")
        h2 = s:spawn(function() local _, rx = cosock.channel.new(); rx:receive() end, "cancelled")
      end)
      return ok, err, pack(h2:join())
    end)
    assert.equal(value, r[2])
    assert.same(pack(nil, "cancelled"), r[3])
  end)

  it("a nested scope's error raised again by a task of the outer one keeps one traceback", function()
    local r = net.in_task(function()
      return scope.run(function(outer)
        outer:spawn(function()
          local ok, err = scope.run(function(s) s:spawn(function() error("deep", 0) end, "inner") end)
          if not ok then error(err, 0) end
        end, "middle")
      end)
    end)
    assert.is_false(r[1])
    local _, tracebacks = r[2]:gsub("stack traceback:", "")
    assert.equal(1, tracebacks)
    assert.equal("deep", lines_of(r[2])[1])
    assert.matches("%(in task 'inner', spawned at ", r[2])
  end)

  it("a scope's task's error still goes neither to the error handler nor out of run", function()
    local handled = 0
    cosock.set_error_handler(function() handled = handled + 1 end)
    local r = net.in_task(function()
      return scope.run(function(s) s:spawn(function() error("x", 0) end, "t") end)
    end)
    assert.is_false(r[1])
    assert.equal(0, handled)
  end)
end)

describe("s:results()", function()
  before_each(function() cosock.reset() end)

  it("waits for every task spawned so far and gives their first results in spawn order", function()
    local r = net.in_task(function()
      return scope.run(function(s)
        for i = 1, 4 do
          s:spawn(function() sleep(0.001 * (5 - i)); return i * 10, "second value" end, "task " .. i)
        end
        s:spawn(function() return nil end, "nil result")
        return s:results()
      end)
    end)
    assert.is_true(r[1])
    assert.same({ 10, 20, 30, 40, nil, n = 5 }, r[2])
  end)

  it("an empty list for a scope with no tasks", function()
    local r = net.in_task(function()
      return scope.run(function(s) return s:results() end)
    end)
    assert.same({ true, { n = 0 } }, { r[1], r[2] })
  end)

  it("a failing task fails the scope with its error; the others are cancelled", function()
    local r = net.in_task(function()
      return scope.run(function(s)
        s:spawn(function() local _, rx = cosock.channel.new(); rx:receive() end, "waits")
        s:spawn(function() sleep(0.001); error("broken", 0) end, "breaks")
        s:results()
        return "not reached"
      end)
    end)
    assert.is_false(r[1])
    assert.equal("broken", lines_of(r[2])[1])
    assert.matches("%(in task 'breaks', spawned at ", r[2])
  end)

  it("nil for a task cancelled by its handle", function()
    local r = net.in_task(function()
      return scope.run(function(s)
        local h = s:spawn(function() local _, rx = cosock.channel.new(); rx:receive() end, "cancelled")
        s:spawn(function() return "kept" end, "kept")
        h:cancel()
        return s:results()
      end)
    end)
    assert.same({ true, { nil, "kept", n = 2 } }, { r[1], r[2] })
  end)

  it("raises for a bad self", function()
    local r = net.in_task(function()
      return scope.run(function(s) return pcall(s.results, {}) end)
    end)
    assert.same({ true, false }, { r[1], r[2] })
    assert.matches("bad self to 'results' %(cosock.scope expected%)", r[3])
  end)
end)
