#!/bin/sh
# Cross-builds cosock-native for ARM with Debian's cross compilers and runs
# its tests under qemu-user, called directly (no binfmt_misc needed).
#   scripts/cross-test.sh arm64|armhf [--no-fast-path] [--sweep-stride K] [--sysroot-only]
#     arm64          64-bit ARM (aarch64-linux-gnu, qemu-aarch64)
#     armhf          32-bit ARM, hard float (arm-linux-gnueabihf, qemu-arm)
#     --no-fast-path every test with COSOCK_NO_FAST_PATH=1
#     --sweep-stride K  the allocation-failure sweep tries every K-th N only
#                    (ALLOC_SWEEP_STRIDE; emulation makes each try about 15
#                    times slower: CI uses 8)
#     --sysroot-only make the target's sysroot, print its path and stop (for
#                    scripts/build-deb.sh --arch)
# Every test runs: the cmocka programs (test/ls_layout_test among them: the
# layout probe of src/features/luasocket_tcp.c on that architecture) and the whole
# busted suite, once per poller (select, epoll).
#
# The target's Debian packages (Lua 5.3, LuaSocket, LuaSec, c-ares, cmocka,
# busted and their dependencies, all for the target architecture) are not
# installed into the host's dpkg: apt resolves and downloads them with a
# private state of its own (APT::Architecture=ARCH, an empty dpkg status),
# and dpkg-deb unpacks them into a sysroot, by default
# /var/cache/cosock-native/cross/ARCH/sysroot ($COSOCK_CROSS_DIR/ARCH). The
# host's foreign architectures and installed packages are left alone, and the
# target's /usr/bin/lua5.3 never meets the host's. The cross compiler builds
# with --sysroot, qemu runs the target's lua5.3 with -L sysroot (qemu looks
# up the paths the program opens in the sysroot first: the target's
# /usr/share/lua/5.3 and /usr/lib/ARCH-TRIPLET/lua/5.3 are found there).
# A second run reuses the sysroot (its stamp names the package list).
#
# Builds in build-cross-ARCH/ (LUA there is a wrapper that runs the target's
# interpreter under qemu, so child processes of specs run under it too), then
# make check: the cmocka programs and busted, all under emulation.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/cross-test.sh arm64|armhf [--no-fast-path] [--sweep-stride K] [--sysroot-only]" >&2; exit 2; }
[ $# -ge 1 ] || usage
arch=$1; shift
case "$arch" in
arm64) triplet=aarch64-linux-gnu; qemu=qemu-aarch64 ;;
armhf) triplet=arm-linux-gnueabihf; qemu=qemu-arm ;;
*) usage ;;
esac
sysroot_only=no
while [ $# -gt 0 ]; do
	case "$1" in
	--no-fast-path) COSOCK_NO_FAST_PATH=1; export COSOCK_NO_FAST_PATH ;;
	--sweep-stride) [ $# -ge 2 ] || usage; ALLOC_SWEEP_STRIDE=$2; export ALLOC_SWEEP_STRIDE; shift ;;
	--sysroot-only) sysroot_only=yes ;;
	*) usage ;;
	esac
	shift
done

# The host's side: the cross compiler, qemu-user, autotools, openssl (TLS specs).
"$top/scripts/install-deps.sh" --cross "$arch" >&2

# ---- the target's sysroot --------------------------------------------------
# The tests need 5.3's; the Debian package builds for 5.1 to 5.4.
PACKAGES="libc6-dev liblua5.3-dev lua5.3 lua-socket lua-sec libc-ares-dev libcmocka-dev lua-busted
liblua5.1-0-dev liblua5.2-dev liblua5.4-dev lua-compat53-dev lua5.1 lua5.2 lua5.4"
base=${COSOCK_CROSS_DIR:-/var/cache/cosock-native/cross}/$arch
sysroot=$base/sysroot
stamp="$arch: $PACKAGES"
if [ "$(cat "$base/stamp" 2>/dev/null || true)" != "$stamp" ]; then
	echo "cross-test: making the $arch sysroot in $sysroot" >&2
	rm -rf "$base"
	mkdir -p "$base/apt/state/lists/partial" "$base/apt/cache/archives/partial" "$sysroot"
	: > "$base/apt/status"
	# The host's sources and keys; state, cache and architecture of its own.
	aptq() {
		apt-get -q -o Dir::State="$base/apt/state" -o Dir::State::status="$base/apt/status" \
			-o Dir::Cache="$base/apt/cache" -o APT::Architecture="$arch" \
			-o APT::Architectures::="$arch" -o Debug::NoLocking=1 "$@"
	}
	# A mirror caught mid-sync fails one index now and then: try again, then
	# go on with what came (the download below fails if a package is missing).
	for try in 1 2 3; do
		aptq update >> "$base/apt.log" 2>&1 && break
		echo "cross-test: apt-get update failed (try $try of 3; $base/apt.log)" >&2
		sleep 10
	done
	# shellcheck disable=SC2086
	aptq install -y --download-only --no-install-recommends $PACKAGES >> "$base/apt.log" 2>&1 ||
		{ cat "$base/apt.log" >&2; exit 1; }
	# Each package's shlibs (which package a library's soname needs), for
	# dpkg-shlibdeps in a cross build of the Debian package.
	for deb in "$base"/apt/cache/archives/*.deb; do
		dpkg-deb -x "$deb" "$sysroot"
		dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - --wildcards './shlibs' 2>/dev/null >> "$base/shlibs" || true
	done
	# Only the interpreter runs from the sysroot: any other program a spec
	# starts (sh, openssl, timeout) is the host's, which qemu would not find
	# behind a target binary of the same name.
	find "$sysroot/bin" "$sysroot/sbin" "$sysroot/usr/sbin" -mindepth 1 -delete 2>/dev/null || true
	find "$sysroot/usr/bin" -mindepth 1 ! -name 'lua5.[1-4]' ! -name busted -delete
	rm -rf "$base/apt/cache" "$base/apt/state"  # 60 MB of lists and .debs: not needed again
	echo "$stamp" > "$base/stamp"
fi
[ "$sysroot_only" = yes ] && { echo "$sysroot"; exit 0; }

# ---- the build ---------------------------------------------------------------
dir=$top/build-cross-$arch
mkdir -p "$dir/bin"
# The target's interpreter under qemu, as configure, make check and the
# specs' child processes call it.
cat > "$dir/bin/lua5.3" <<EOF
#!/bin/sh
exec $qemu -L "$sysroot" "$sysroot/usr/bin/lua5.3" "\$@"
EOF
# make check's LOG_COMPILER: a target ELF program under qemu, a script as it is.
cat > "$dir/bin/run-target" <<EOF
#!/bin/sh
case "\$(head -c 4 "\$1" | od -An -c | tr -d ' ')" in
177ELF) exec $qemu -L "$sysroot" "\$@" ;;
*) exec "\$@" ;;
esac
EOF
chmod +x "$dir/bin/lua5.3" "$dir/bin/run-target"
[ -x "$top/configure" ] || "$top/bootstrap" > /dev/null
cd "$dir"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
	PKG_CONFIG=pkg-config PKG_CONFIG_SYSROOT_DIR=$sysroot \
	PKG_CONFIG_LIBDIR=$sysroot/usr/lib/$triplet/pkgconfig:$sysroot/usr/share/pkgconfig \
	"$top/configure" -q --host="$triplet" CC="$triplet-gcc --sysroot=$sysroot" \
		LUA="$dir/bin/lua5.3" BUSTED="$sysroot/usr/bin/busted" \
		LUA_INCLUDE="-I$sysroot/usr/include/lua5.3"
fi
make -s -j"$(nproc 2>/dev/null || echo 2)"
echo "cross-test: built $(file -b src/.libs/core.so | cut -d, -f1-2)"

# ---- the tests, under emulation -------------------------------------------------
# (A spec that must allow for slow execution, as under valgrind, reads it.)
COSOCK_EMULATED=$qemu
CN_RUN_TARGET=$dir/bin/run-target             # (what a test script runs a target program with)
export COSOCK_EMULATED CN_RUN_TARGET
rm -f test/*.log test/*.trs
status=0
make -s check -j"$(nproc 2>/dev/null || echo 2)" LOG_COMPILER="$dir/bin/run-target" || status=$?
echo "==== summaries (build-cross-$arch, Lua 5.3 on $qemu, sweep stride ${ALLOC_SWEEP_STRIDE:-1}${COSOCK_NO_FAST_PATH:+, no fast path}) ===="
"$top/scripts/test-summary.sh" "$status" test/*.log
if [ "$status" -ne 0 ]; then
	echo "cross-test: failures; logs are in $dir (test/*.log)" >&2
	tail -n 60 test/*.log >&2 || true
fi
exit "$status"
