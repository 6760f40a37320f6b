#!/bin/sh
# Builds the Debian binary packages (debian/, dh-lua: lua-cosock-native for every Lua
# version with a debian/lua<version>.cosock-native.dh-lua.conf, its -dev and
# the arch:all -doc) with `dpkg-buildpackage -us -uc -b` in a copy of the
# checkout (the source package of a release: scripts/build-source-package.sh,
# from the release tarball), installs them,
# runs the demo against the installed copy on each of those Lua versions, and
# removes them again unless --keep is given (or they were installed before).
#   scripts/build-deb.sh [--keep] [--out DIR] [--arch arm64|armhf]
#     --out DIR    keeps the .deb files in DIR
#     --arch ARCH  a cross build for ARCH (dpkg-buildpackage -a ARCH) against
#                  the target's sysroot of scripts/cross-test.sh, nothing
#                  installed on the host: prints each package's fields and
#                  files, installs them (dpkg-deb -x) into a copy of that
#                  sysroot and runs the demo there on each Lua version,
#                  under qemu, with the interpreter's own paths (doc/arm.md)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no
out=
arch=
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=yes ;;
	--out) out=${2:?--out needs a directory}; shift ;;
	--arch) arch=${2:?--arch needs arm64 or armhf}; shift ;;
	*) echo "usage: scripts/build-deb.sh [--keep] [--out DIR] [--arch arm64|armhf]" >&2; exit 2 ;;
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
"$top/scripts/install-deps.sh" --deb ${arch:+--cross "$arch"}
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
if [ -n "$arch" ]; then
	# The target's compiler, headers and libraries from the sysroot; the
	# build dependencies are there, not in the host's dpkg (-d); the build
	# cannot run the target's lua (nocheck: the demo runs below, under qemu).
	sysroot=$("$top/scripts/cross-test.sh" "$arch" --sysroot-only)
	triplet=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
	cp "$(dirname "$sysroot")/shlibs" "$src/debian/shlibs.local"
	export CN_SYSROOT="$sysroot" CC="$triplet-gcc --sysroot=$sysroot" PKG_CONFIG=pkg-config \
		PKG_CONFIG_SYSROOT_DIR="$sysroot" DEB_BUILD_OPTIONS=nocheck \
		PKG_CONFIG_LIBDIR="$sysroot/usr/lib/$triplet/pkgconfig:$sysroot/usr/share/pkgconfig"
	# dh-lua runs ldd on what it links, which cannot load a target's
	# library: the target's objdump lists its NEEDED entries instead.
	mkdir "$tmp/cross-bin"
	printf '#!/bin/sh\n%s-objdump -p "$@" | grep NEEDED\n' "$triplet" > "$tmp/cross-bin/ldd"
	chmod +x "$tmp/cross-bin/ldd"
	PATH=$tmp/cross-bin:$PATH
	set -- -a"$arch" -d
fi
echo "build-deb: dpkg-buildpackage -us -uc -b $* (Lua $(echo $versions)), log in $tmp/build.log"
(cd "$src" && dpkg-buildpackage -us -uc -b "$@") > "$tmp/build.log" 2>&1 || {
	tail -n 60 "$tmp/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed" >&2
	exit 1
}
grep -E '^Test:|answers correct' "$tmp/build.log" | sed 's/^/build-deb: build-time test: /'
debs=$(ls "$tmp"/*.deb | grep -v -- '-dbgsym_')
for d in $debs; do echo "build-deb: built $(basename "$d")"; done
if [ -n "$out" ]; then mkdir -p "$out" && cp $debs "$out/"; fi

if [ -n "$arch" ]; then
	qemu=qemu-aarch64
	[ "$arch" = armhf ] && qemu=qemu-arm
	# Installed into a copy of the sysroot (the target's system: Lua,
	# LuaSocket), as on a hub: the demo then finds cosock through the
	# interpreter's default paths, with no LUA_PATH.
	root=$tmp/sysroot
	cp -a "$sysroot" "$root"
	for d in $debs; do
		echo "build-deb: $(basename "$d"):"
		dpkg-deb -f "$d" Package Architecture Depends Provides | sed 's/^/build-deb:   /'
		dpkg-deb -c "$d" | awk '{ s = "build-deb:   " $1 " " $3; for (i = 6; i <= NF; i++) s = s " " $i; print s }'
		dpkg-deb -x "$d" "$root"
	done
	for v in $versions; do
		printf '#!/bin/sh\nexec %s -L "%s" "%s/usr/bin/lua%s" "$@"\n' "$qemu" "$root" "$root" "$v" > "$tmp/lua$v"
		chmod +x "$tmp/lua$v"
		echo "build-deb: the demo on Lua $v ($arch, $qemu) against the package installed in a copy of the sysroot"
		env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_3 -u LUA_CPATH_5_3 -u LUA_PATH_5_4 -u LUA_CPATH_5_4 \
			"$top/scripts/demo-installed.sh" "$tmp/lua$v" /usr/
	done
	echo "build-deb: the $arch Debian packages build, and run under $qemu"
	exit 0
fi

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
no-*) $SUDO apt-get purge -y -qq lua-cosock-native lua-cosock-native-dev lua-cosock-native-doc > /dev/null
	echo "build-deb: removed the packages again (--keep keeps them)" ;;
esac
echo "build-deb: the Debian packages build, install and run"
