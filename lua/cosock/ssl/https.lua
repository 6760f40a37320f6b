--- cosock.ssl.https: LuaSec's ssl.https loaded through cosock.asyncify, so its
--- requests run on cosock sockets (cosock.ssl wrappers) and wait by yielding to the
--- loop. Same API as ssl.https (request, tcp, TIMEOUT, ...); call it from a task.
return require("cosock.asyncify")("ssl.https")
