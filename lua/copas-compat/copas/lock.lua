-- copas.lock as cosock-native's (doc/copas.md).
return require("cosock.copas").lock
