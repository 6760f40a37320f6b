-- Throwaway TLS material for the specs: a CA and a server certificate for
-- 127.0.0.1 / localhost, made with the `openssl` command into a fresh temporary
-- directory when a spec asks for it. Nothing is committed; call cleanup() after.
--
--   local certs = require "spec.support.certs"
--   local c = certs.generate()   -- { dir, cafile, certfile, keyfile, server_config(), client_config() }
--   ...
--   c.cleanup()

local M = {}

local function sh(cmd)
  local ok, how, code = os.execute(cmd .. " >/dev/null 2>&1")
  if not ok then
    error(string.format("command failed (%s %s): %s", tostring(how), tostring(code), cmd), 2)
  end
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local cached

--- Generate (once per Lua state) the CA and server certificate. EC P-256 keys:
--- quick to make and accepted by LuaSec's defaults.
function M.generate()
  if cached then return cached end
  local dir = os.tmpname()
  os.remove(dir)
  sh("mkdir -m 700 " .. q(dir))
  local function p(name) return dir .. "/" .. name end
  -- CA
  sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    .. " -keyout " .. q(p("ca.key")) .. " -out " .. q(p("ca.crt"))
    .. " -days 2 -subj '/CN=cosock-native spec CA'"
    .. " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign")
  -- server key + request, signed by the CA with 127.0.0.1 / localhost as names
  sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    .. " -keyout " .. q(p("server.key")) .. " -out " .. q(p("server.csr"))
    .. " -subj '/CN=localhost'")
  local ext = assert(io.open(p("server.ext"), "w"))
  ext:write("basicConstraints=CA:FALSE\n",
    "keyUsage=digitalSignature,keyEncipherment\n",
    "extendedKeyUsage=serverAuth,clientAuth\n",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
  ext:close()
  sh("openssl x509 -req -in " .. q(p("server.csr")) .. " -CA " .. q(p("ca.crt"))
    .. " -CAkey " .. q(p("ca.key")) .. " -CAcreateserial -days 2"
    .. " -extfile " .. q(p("server.ext")) .. " -out " .. q(p("server.crt")))

  local c = {
    dir = dir,
    cafile = p("ca.crt"),
    certfile = p("server.crt"),
    keyfile = p("server.key"),
  }
  function c.server_config()
    return {
      mode = "server", protocol = "any",
      certificate = c.certfile, key = c.keyfile,
      verify = "none", options = "all",
    }
  end
  function c.client_config()
    return {
      mode = "client", protocol = "any",
      cafile = c.cafile, verify = "peer", options = "all",
    }
  end
  function c.cleanup()
    sh("rm -rf " .. q(dir))
    cached = nil
  end
  cached = c
  return c
end

return M
