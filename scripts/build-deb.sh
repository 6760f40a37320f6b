#!/bin/sh
# Builds the Debian packages (debian/, dh-lua: lua-cosock-native for every Lua
# version with a debian/lua<version>.cosock-native.dh-lua.conf, and its -dev)
# with `dpkg-buildpackage -us -uc -b` in a copy of the checkout, installs them,
# runs the demo against the installed copy on each of those Lua versions, and
# removes them again unless --keep is given (or they were installed before).
#   scripts/build-deb.sh [--keep] [--out DIR]   (DIR keeps the .deb files)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no
out=
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=yes ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	*) echo "usage: scripts/build-deb.sh [--keep] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "build-deb: run as root (or install sudo)" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

versions=$(cd "$top/debian" && ls lua*.cosock-native.dh-lua.conf | sed 's/^lua\([0-9.]*\)\.cosock-native.*/\1/')
"$top/scripts/install-deps.sh" --deb
# The build dependencies debian/control names.
$SUDO apt-get build-dep -y -qq "$top" > /dev/null

# A copy of the checkout (tracked files and new ones, not what .gitignore
# leaves out), so that nothing the build makes lands in the git tree.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/lua-cosock-native
mkdir "$src"
if git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$src" -xf -
else
	tar -C "$top" --exclude='./build*' -cf - . | tar -C "$src" -xf -
fi
echo "build-deb: dpkg-buildpackage -us -uc -b (Lua $(echo $versions)), log in $tmp/build.log"
(cd "$src" && dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1 || {
	tail -n 60 "$tmp/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed" >&2
	exit 1
}
grep -E '^Test:|answers correct' "$tmp/build.log" | sed 's/^/build-deb: build-time test: /'
debs=$(ls "$tmp"/*.deb | grep -v -- '-dbgsym_')
for d in $debs; do echo "build-deb: built $(basename "$d")"; done
if [ -n "$out" ]; then mkdir -p "$out" && cp $debs "$out/"; fi

# Install (apt resolves lua-socket), then the demo from the installed files.
was_installed=$(dpkg-query -W -f='${Status}' lua-cosock-native 2>/dev/null || true)
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --reinstall $debs > /dev/null
for v in $versions; do
	echo "build-deb: the demo on Lua $v against the installed package"
	env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_3 -u LUA_CPATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_4 \
		"$top/scripts/demo-installed.sh" "lua$v" /usr/
	# LuaJIT loads the 5.1 package's modules.
	if [ "$v" = 5.1 ]; then
		echo "build-deb: the demo on LuaJIT against the installed package (its Lua 5.1 modules)"
		env -u LUA_PATH -u LUA_CPATH "$top/scripts/demo-installed.sh" luajit /usr/
	fi
done
case "$keep-$was_installed" in
no-*" installed") echo "build-deb: lua-cosock-native was installed before: left installed (the new build)" ;;
no-*) $SUDO apt-get purge -y -qq lua-cosock-native lua-cosock-native-dev > /dev/null
	echo "build-deb: removed the packages again (--keep keeps them)" ;;
esac
echo "build-deb: the Debian packages build, install and run"
