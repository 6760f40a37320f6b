-- https_rest: the Aqara presence sensor driver's lunchbox REST client with the
-- driver's own socket builder for its FP2 devices (fp2/api.lua's
-- labeled_socket_builder: cosock.ssl with verify = "peer" against
-- ./selfSignedRootByAqaraLife.crt, a path relative to the working directory),
-- over HTTPS to a local server that wraps each connection with cosock.ssl in
-- server mode. The certificate is made at run time with openssl and written
-- where the driver looks for its root (the case runs in an empty directory),
-- so the handshake verifies. Then the same requests as hue_rest (see
-- lib/rest_case.lua): keep-alive GETs (Content-Length, chunked), POST, PUT,
-- the server's close and the client's reconnect, with a new TLS handshake.
-- needs: edge luncheon neturl
local here = arg[0]:match("^(.*)/") or "."
local H = dofile(here .. "/lib/harness.lua")
local tmp = os.tmpname()
local tls = H.make_cert(tmp .. ".d")
-- The driver's root certificate file, relative to the working directory.
assert(os.execute("cp '" .. tls.certificate .. "' ./selfSignedRootByAqaraLife.crt"))
H.use("edge", "drivers/Aqara/aqara-presence-sensor/src")
H.use("neturl", "lib")
H.use("luncheon")
local fp2_api = require "fp2.api"
dofile(here .. "/lib/rest_case.lua")(H, "drivers/Aqara/aqara-presence-sensor/src",
  function() return fp2_api.labeled_socket_builder("fp2") end, tls)
os.execute("rm -rf '" .. tmp .. "' '" .. tmp .. ".d' ./selfSignedRootByAqaraLife.crt")
