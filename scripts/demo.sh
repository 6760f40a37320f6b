#!/bin/sh
# Installs what is missing, builds cosock-native and runs examples/demo.lua
# (or examples/NAME.lua, or a program of yours: FILE.lua) against the build
# tree. Only the program prints: the installing and building go to a log in
# the build directory, shown when they fail. LUA_VERSION=5.4 runs it on Lua
# 5.4 (built in build-lua5.4/).
#   scripts/demo.sh [NAME|FILE.lua [args...]]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=${LUA_VERSION:-5.3}
dir=build
[ "$version" = 5.3 ] || dir=build-lua$version
mkdir -p "$top/$dir"
log=$top/$dir/demo-setup.log
if ! { "$top/scripts/install-deps.sh" --lua "$version" &&
       "$top/scripts/build.sh" "$dir" LUA="lua$version"; } > "$log" 2>&1; then
	cat "$log" >&2
	echo "demo.sh: installing or building failed; the output above is in $log" >&2
	exit 1
fi
[ $# -gt 0 ] || set -- demo
case $1 in
*.lua)	# a program of the user's (hello.lua): the checkout's modules, this build's C module
	[ -f "$1" ] || { echo "demo.sh: $1: no such file" >&2; exit 1; }
	LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" LUA_CPATH="$top/$dir/src/cpath/?.so;;" \
		exec "lua$version" "$@" ;;
esac
LUA_VERSION=$version exec "$top/scripts/run-example.sh" "$@"
