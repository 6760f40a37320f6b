-- copas.future as cosock-native's (doc/copas.md).
return require("cosock.copas").future
