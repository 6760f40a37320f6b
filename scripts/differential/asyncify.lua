-- cosock.asyncify: loading a module so that its require "socket" gives
-- cosock's; what comes back for a module of ours, for socket, ssl, a standard
-- library module and a missing one; where the module's globals go.
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/lib/report.lua")
package.path = (arg[0]:match("^(.*)/") or ".") .. "/lib/?.lua;" .. package.path
local cosock = require "cosock"
local asyncify = cosock.asyncify

R.show("type(asyncify)", type(asyncify))
local ok, mod = pcall(asyncify, "asyncified.uses_socket")
R.show("asyncify module ok", ok, type(mod))
if ok and type(mod) == "table" then
  R.show("module saw tcp", mod.has_tcp)
  R.show("module's select is cosock's", mod.select_is_cosock)
  R.show("sibling", type(mod.sibling), mod.sibling and mod.sibling.socket_tcp)
  R.show("string lib inside", mod.string_lib)
end
R.show("global set by the module", differential_global_from_module)
R.show("cached", asyncify("asyncified.uses_socket") == mod)
R.show("package.loaded untouched", package.loaded["asyncified.uses_socket"] == nil)
local s = asyncify("socket")
R.show("asyncify socket", type(s), type(s) == "table" and type(s.tcp), s == cosock.socket)
R.show("asyncify socket again", asyncify("socket") == s)
local missing = asyncify("no.such.module")
R.show("asyncify missing", type(missing), type(missing) == "string" and missing:match("^[^\n]*"))
local http = asyncify("socket.http")
R.show("asyncify socket.http", type(http), type(http) == "table" and type(http.request))
R.show("cosock.socket.http via require", type(require "cosock.socket.http"))
R.show("asyncify string", type(asyncify("string")))
