#!/bin/sh
# The soak run (bench/soak.lua) against the build tree: a mixed workload for
# SECONDS (default 60), a line of RSS / Lua heap / fds / tasks every
# REPORT_EVERY seconds (default 5), then "flat" or what grew (exit 1).
#   scripts/soak.sh [SECONDS [REPORT_EVERY]]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$top/build/src/cpath/cosock/core.so" ] || {
	echo "soak.sh: no build in $top/build (run scripts/build.sh first)" >&2; exit 2; }
cd "$top"
LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" LUA_CPATH="$top/build/src/cpath/?.so;;" \
	exec lua5.3 bench/soak.lua "${1:-60}" "${2:-5}"
