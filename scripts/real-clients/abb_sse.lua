-- abb_sse: the ABB InSite SCU200 driver's copy of the lunchbox EventSource (a POST
-- with a JSON body, dkjson from the system), closed while it waits
-- for the next event (see lib/sse_case.lua).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
dofile(here .. "/lib/sse_case.lua")(H, "drivers/ABB/insite-scu200/src", true)
