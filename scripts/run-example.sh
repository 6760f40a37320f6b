#!/bin/sh
# Runs examples/NAME.lua against the build tree: with lua5.3 and build/, or
# with luaX.Y and build-luaX.Y/ when LUA_VERSION=X.Y is set.
#   scripts/run-example.sh demo|echo_server|pipeline|...
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: scripts/run-example.sh NAME [args...]}
shift
version=${LUA_VERSION:-5.3}
dir=build
[ "$version" = 5.3 ] || dir=build-lua$version
LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" \
LUA_CPATH="$top/$dir/src/cpath/?.so;;" \
	exec "lua$version" "$top/examples/$name.lua" "$@"
