--- cosock.socket.http: LuaSocket's socket.http loaded through cosock.asyncify, so its
--- requests run on cosock sockets and wait by yielding to the loop. Same API as
--- socket.http (request, TIMEOUT, USERAGENT, ...); call it from inside a task.
return require("cosock.asyncify")("socket.http")
