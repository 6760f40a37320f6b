-- hue_rest: the Philips Hue driver's lunchbox REST client against a local
-- server (see lib/rest_case.lua). The Hue client connects to port 80 or 443,
-- so the case passes a socket builder, as the driver does, that connects to the
-- local server's port instead. The driver's utils module loads the whole driver
-- (capabilities, device types); the client uses only its backoff_builder, so a
-- stub with that function stands in for it.
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
package.preload.utils = function()
  return {
    backoff_builder = function()
      return function() return 0.01 end
    end,
  }
end
local function builder(port)
  return function(host, _, _)
    local socket = require "cosock.socket"
    local s = assert(socket.tcp())
    assert(s:settimeout(5))
    local ok, err = s:connect(host, port)
    if not ok then return nil, err end
    return s
  end
end
dofile(here .. "/lib/rest_case.lua")(H, "drivers/SmartThings/philips-hue/src", builder)
