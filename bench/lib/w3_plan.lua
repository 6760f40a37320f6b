-- The W3 timer plan shared by every implementation: TASKS tasks, each doing
-- SLEEPS sleeps whose lengths come from one seeded generator, uniform in
-- [0, MAXLEN] seconds. Returns a flat array: plan[(task-1)*SLEEPS + k].
local B = require "bench"

return function(tasks, sleeps, maxlen, seed)
  local rnd = B.rng(seed or 20240605)
  local plan = {}
  for i = 1, tasks * sleeps do
    plan[i] = rnd() * maxlen
  end
  return plan
end
