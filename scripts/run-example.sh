#!/bin/sh
# Runs examples/NAME.lua with lua5.3 against the build tree in build/.
#   scripts/run-example.sh demo|echo_server|pipeline|...
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: scripts/run-example.sh NAME [args...]}
shift
LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" \
LUA_CPATH="$top/build/src/cpath/?.so;;" \
	exec lua5.3 "$top/examples/$name.lua" "$@"
