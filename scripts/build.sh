#!/bin/sh
# Configures and builds cosock-native in a build directory beside the sources.
#   scripts/build.sh [DIR [configure options...]]   (DIR defaults to build)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$top/configure" ] || "$top/bootstrap" >/dev/null
# An in-tree build (./configure run in the source directory itself) and a
# build directory cannot live together: autoconf refuses the second with
# "source directory already configured; run make distclean there first".
# Say which directory that is and both ways out.
if [ -f "$top/config.status" ] && [ "$(cd "$top/$dir" 2>/dev/null && pwd)" != "$top" ]; then
	cat >&2 <<EOF
build.sh: the source directory $top is configured in-tree
  (./configure was run there: $top/config.status), and autoconf then refuses
  to configure a build directory ($top/$dir) for the same sources.
  Either clean the in-tree build (what 'make install' installed stays installed):
      cd $top && make distclean
  or keep it and build there instead of with these scripts (cd $top && make).
  The README's Install builds in a directory of its own (mkdir build-install &&
  cd build-install && ../configure), which lives beside the scripts' build/.
EOF
	exit 1
fi
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
