-- copas.ftp as cosock-native's (doc/copas.md).
return require("cosock.copas").ftp
