#!/bin/sh
# Installs what is missing, builds cosock-native and runs examples/demo.lua
# (or examples/NAME.lua) against the build tree. Only the demo prints: the
# installing and building go to a log in the build directory, shown when they
# fail. LUA_VERSION=5.4 runs it on Lua 5.4 (built in build-lua5.4/).
#   scripts/demo.sh [NAME [args...]]
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
LUA_VERSION=$version exec "$top/scripts/run-example.sh" "$@"
