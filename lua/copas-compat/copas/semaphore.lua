-- copas.semaphore as cosock-native's (doc/copas.md).
return require("cosock.copas").semaphore
