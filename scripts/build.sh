#!/bin/sh
# Configures and builds cosock-native in a build directory beside the sources.
#   scripts/build.sh [DIR [configure options...]]   (DIR defaults to build)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$top/configure" ] || "$top/bootstrap" >/dev/null
mkdir -p "$top/$dir"
cd "$top/$dir"
# The project's scripts build for the primary target, Lua 5.3, unless told
# otherwise (a plain ./configure takes the newest Lua with its headers).
case " $* " in
*" LUA="*|*" --with-lua-version"*) ;;
*) set -- "$@" LUA=lua5.3 ;;
esac
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
	"$top/configure" -q "$@"
fi
make -s -j"$(nproc 2>/dev/null || echo 2)"
