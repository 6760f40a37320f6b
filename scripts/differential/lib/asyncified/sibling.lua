-- Required by uses_socket.lua from inside asyncify.
return { name = "sibling", socket_tcp = type(require("socket").tcp) }
