-- jbl_rest: the JBL driver's copy of the lunchbox REST client, with the
-- driver's own default socket builder (utils.labeled_socket_builder), against
-- a local server (see lib/rest_case.lua).
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
dofile(here .. "/lib/rest_case.lua")(H, "drivers/SmartThings/jbl/src")
