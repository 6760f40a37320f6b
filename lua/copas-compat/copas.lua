-- copas as cosock-native's (doc/copas.md): put this directory first on
-- LUA_PATH and `require "copas"` gives cosock.copas. Required again (after
-- package.loaded.copas was cleared) it gives a fresh copy, as copas does.
if package.loaded["cosock.copas"] then
  package.loaded["cosock.copas"] = nil
  for _, k in ipairs({ "ftp", "future", "http", "lock", "queue", "semaphore", "smtp", "timer", "luasocket" }) do
    package.loaded["cosock.copas." .. k] = nil
  end
end
return require("cosock.copas").install()
