#!/bin/sh
# Installs the Debian packages cosock-native needs to build and test for one
# Lua version, and optionally for the benchmarks, the rock check or the Debian
# package build. Idempotent: when every package is present it installs nothing
# and needs no network.
#   scripts/install-deps.sh [--lua X.Y] [--bench] [--copas] [--rock] [--deb] [--doc] [--browser]
#     --lua X.Y   the Lua version: 5.1, 5.2, 5.3, 5.4 or jit (LuaJIT 2.1);
#                 default $LUA_VERSION, else 5.3
#     --bench     also cqueues and time(1), for bench/run (and binaryheap and
#                 coxpcall, which copas 4.11 needs, for its copas rows)
#     --copas     what copas 4.11 itself needs (binaryheap, coxpcall) and
#                 mosquitto, for scripts/copas-tests.sh and scripts/copas-clients.sh
#     --rock      also luarocks, for scripts/check-rock.sh
#     --deb       also what scripts/build-deb.sh needs (dpkg-dev, debhelper, dh-lua;
#                 pandoc, which the arch:all -doc package is built with)
#     --release   also what scripts/build-source-package.sh needs (--deb's,
#                 pandoc for the -doc package, lintian)
#     --doc       also pandoc, for make doc (scripts/build-doc.sh)
#     --browser   also chromium and python3-pil (python3's PIL, to read
#                 pixels), for scripts/check-trace-html.sh
#     --cross ARCH also the cross compiler for ARCH (arm64, armhf), qemu-user
#                 and file, for scripts/cross-test.sh (the target's own
#                 packages go into a sysroot, not here)
set -eu

version=${LUA_VERSION:-5.3}
extra=
while [ $# -gt 0 ]; do
	case "$1" in
	--lua) [ $# -ge 2 ] || { echo "install-deps: --lua needs a version" >&2; exit 2; }
		version=$2; shift ;;
	--lua=*) version=${1#--lua=} ;;
	--bench) extra="$extra lua-cqueues time lua-binaryheap lua-coxpcall" ;; # (the last two: copas 4.11 itself, for bench/run's copas rows)
	--copas) extra="$extra lua-binaryheap lua-coxpcall mosquitto" ;; # scripts/copas-tests.sh, scripts/copas-clients.sh
	--rock) extra="$extra luarocks" ;;
	--deb) extra="$extra dpkg-dev debhelper dh-lua fakeroot lua5.1 lua5.2 luajit pandoc" ;; # (pandoc: the arch:all -doc package)
	--release) extra="$extra dpkg-dev debhelper dh-lua fakeroot lua5.1 lua5.2 luajit pandoc lintian" ;;
	--doc) extra="$extra pandoc" ;;
	--browser) extra="$extra chromium python3-pil" ;;
	--cross) case "${2:-}" in
		arm64) extra="$extra gcc-aarch64-linux-gnu" ;;
		armhf) extra="$extra gcc-arm-linux-gnueabihf" ;;
		*) echo "install-deps: --cross needs arm64 or armhf" >&2; exit 2 ;;
		esac
		extra="$extra qemu-user file"; shift ;;
	*) echo "usage: scripts/install-deps.sh [--lua X.Y] [--bench] [--rock] [--deb] [--release] [--doc] [--browser] [--cross ARCH]" >&2; exit 2 ;;
	esac
	shift
done
# The interpreter and the headers are per version (what the module needs of
# the 5.3 C API before 5.3 is in src/compat/); LuaJIT has its own packages.
case "$version" in
5.3|5.4) lua_packages="lua$version liblua$version-dev" ;;
5.1) lua_packages="lua5.1 liblua5.1-0-dev" ;;
5.2) lua_packages="lua5.2 liblua5.2-dev" ;;
jit) lua_packages="luajit libluajit-5.1-dev" ;;
*) echo "install-deps: Lua $version is not supported (5.1, 5.2, 5.3, 5.4 or jit)" >&2; exit 2 ;;
esac

# lua-socket, lua-sec, lua-busted, lua-luv (for examples/luv_host.lua's
# spec) and lua-dkjson (spec/trace_chrome_spec.lua parses the Chrome export
# with it) carry the modules of every Lua version Debian has (LuaJIT loads 5.1's).
PACKAGES="gcc make autoconf automake libtool pkg-config autoconf-archive
$lua_packages lua-socket lua-sec lua-busted lua-luv lua-dkjson libcmocka-dev libc-ares-dev openssl valgrind$extra"

missing=
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
