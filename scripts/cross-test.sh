#!/bin/sh
# Cross-builds cosock-native for ARM with Debian's cross compilers and runs
# its tests under qemu-user, called directly (no binfmt_misc needed).
#   scripts/cross-test.sh arm64|armhf [--no-fast-path] [--all|--subset] [--sysroot-only]
#     arm64          64-bit ARM (aarch64-linux-gnu, qemu-aarch64)
#     armhf          32-bit ARM, hard float (arm-linux-gnueabihf, qemu-arm)
#     --no-fast-path every test with COSOCK_NO_FAST_PATH=1
#     --all          the whole busted suite (the default)
#     --subset       only the specs CI runs under emulation: $SUBSET below
#     --sysroot-only make the target's sysroot and stop (for build-deb.sh --arch)
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
usage() { echo "usage: scripts/cross-test.sh arm64|armhf [--no-fast-path] [--all|--subset] [--sysroot-only]" >&2; exit 2; }
[ $# -ge 1 ] || usage
arch=$1; shift
case "$arch" in
arm64) triplet=aarch64-linux-gnu; qemu=qemu-aarch64 ;;
armhf) triplet=arm-linux-gnueabihf; qemu=qemu-arm ;;
*) usage ;;
esac
specs=all
sysroot_only=no
while [ $# -gt 0 ]; do
	case "$1" in
	--no-fast-path) COSOCK_NO_FAST_PATH=1; export COSOCK_NO_FAST_PATH ;;
	--all) specs=all ;;
	--subset) specs=subset ;;
	--sysroot-only) sysroot_only=yes ;;
	*) usage ;;
	esac
	shift
done

# The subset: the loop (spawn/run, timers, wakers, errors, cancel/close),
# channels, the timer objects, TCP/UDP sockets and select, TLS, and the
# layout probe of src/luasocket_tcp.c (luasocket_layout_spec and the fast
# path assertions of socket_tcp_spec). The other specs cover the same C paths
# again through other API, or the docs.
SUBSET="spec/loop_spawn_run_spec.lua spec/loop_timers_spec.lua spec/loop_wakers_spec.lua
spec/loop_errors_spec.lua spec/loop_cancel_close_spec.lua spec/channel_spec.lua
spec/channel_bounded_spec.lua spec/timer_spec.lua spec/socket_tcp_spec.lua
spec/socket_udp_spec.lua spec/select_mixed_spec.lua spec/ssl_spec.lua
spec/luasocket_layout_spec.lua"

# The host's side: the cross compiler, qemu-user, autotools, openssl (TLS specs).
"$top/scripts/install-deps.sh" --cross "$arch"

# ---- the target's sysroot --------------------------------------------------
PACKAGES="libc6-dev liblua5.3-dev lua5.3 lua-socket lua-sec libc-ares-dev libcmocka-dev lua-busted"
base=${COSOCK_CROSS_DIR:-/var/cache/cosock-native/cross}/$arch
sysroot=$base/sysroot
stamp="$arch: $PACKAGES"
if [ "$(cat "$base/stamp" 2>/dev/null || true)" != "$stamp" ]; then
	echo "cross-test: making the $arch sysroot in $sysroot"
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
	for deb in "$base"/apt/cache/archives/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
	# Only the interpreter runs from the sysroot: any other program a spec
	# starts (sh, openssl, timeout) is the host's, which qemu would not find
	# behind a target binary of the same name.
	find "$sysroot/bin" "$sysroot/sbin" "$sysroot/usr/sbin" -mindepth 1 -delete 2>/dev/null || true
	find "$sysroot/usr/bin" -mindepth 1 ! -name lua5.3 ! -name busted -delete
	rm -rf "$base/apt/cache" "$base/apt/state"  # 60 MB of lists and .debs: not needed again
	echo "$stamp" > "$base/stamp"
fi
[ "$sysroot_only" = yes ] && { echo "cross-test: the $arch sysroot is $sysroot"; exit 0; }

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
rm -f test/*.log test/*.trs
status=0
if [ "$specs" = subset ]; then
	BUSTED_ARGS=$(echo $SUBSET); export BUSTED_ARGS
fi
make -s check -j"$(nproc 2>/dev/null || echo 2)" LOG_COMPILER="$dir/bin/run-target" || status=$?
echo "==== summaries (build-cross-$arch, Lua 5.3 on $qemu, specs: $specs${COSOCK_NO_FAST_PATH:+, no fast path}) ===="
grep -hE '^\[  (PASSED|FAILED)  \]|^[0-9]+ success' test/*.log || true
cat test/*.log | awk -v status="$status" '
	/^\[  PASSED  \] [0-9]+ test/ { p += $4 }
	/^\[  FAILED  \] [0-9]+ test/ { f += $4 }
	/^[0-9]+ successes? \/ [0-9]+ failures? \/ [0-9]+ errors?/ { p += $1; f += $4 + $7; pend += $10 }
	END {
		if (status != 0 && f == 0) f = 1
		printf "%d passed, %d failed, %d skipped\n", p, f, pend
	}'
if [ "$status" -ne 0 ]; then
	echo "cross-test: failures; logs are in $dir (test/*.log)" >&2
	tail -n 60 test/*.log >&2 || true
fi
exit "$status"
