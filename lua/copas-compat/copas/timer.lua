-- copas.timer as cosock-native's (doc/copas.md).
return require("cosock.copas").timer
