-- A module for asyncify.lua: requires socket (and a sibling), sets a global,
-- and reports what it was given.
local socket = require "socket"
local sibling = require "asyncified.sibling"
differential_global_from_module = "set"
return {
  has_tcp = type(socket.tcp),
  select_is_cosock = socket.select == require("cosock").socket.select,
  sibling = sibling,
  string_lib = type(require "string"),
}
