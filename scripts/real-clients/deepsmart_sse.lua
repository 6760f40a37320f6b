-- deepsmart_sse: the DeepSmart driver's copy of the lunchbox EventSource, closed while it waits
-- for the next event (see lib/sse_case.lua).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
dofile(here .. "/lib/sse_case.lua")(H, "drivers/DeepSmart/deepsmart/src")
