-- hue_sse: the Philips Hue driver's lunchbox EventSource, closed while it waits
-- for the next event (see lib/sse_case.lua).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
dofile(here .. "/lib/sse_case.lua")(H, "drivers/SmartThings/philips-hue/src")
