-- scope_gather.lua: several tasks at once, their results gathered in order,
-- and what a failing task's error looks like.
--
-- Shows: s:spawn for each piece of work and s:results() for their results
-- in spawn order (whatever order they finish in); a task that raises fails
-- the scope, cancels the others, and scope.run's error names the task, the
-- line that raised and where it was spawned, as run() does for any task.
--
-- Run from a checkout, after a build:  ./scripts/run-example.sh scope_gather
-- It prints (the file names as Lua was given them):
--   squares: 1 4 9 16 25
--   failed: .../scope_gather.lua:NN: attempt to perform arithmetic on a nil value (local 'x')
--     (the message as this Lua words it)
--   in task 'square of nil', spawned at .../scope_gather.lua:NN
--   run() returned
local cosock = require "cosock"
local scope = cosock.scope

local function square(x)
  cosock.socket.sleep(0.01 / (x or 1))   -- (the later ones finish first)
  return x * x
end

cosock.spawn(function()
  local ok, squares = scope.run(function(s)
    for i = 1, 5 do s:spawn(function() return square(i) end, "square of " .. i) end
    return s:results()
  end)
  assert(ok, squares)
  print("squares: " .. table.concat(squares, " ", 1, squares.n))

  local ok2, err = scope.run(function(s)
    s:spawn(function() return square(2) end, "square of 2")
    s:spawn(function() return square(nil) end, "square of nil")
    return s:results()
  end)
  assert(not ok2)
  print("failed: " .. err:match("^[^\n]*"))
  print(err:match("%((in task .*)%)$"))
end, "main")

cosock.run()
print("run() returned")
