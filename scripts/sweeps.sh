#!/bin/sh
# The long runs of the two sweeps that check delivery and wakes after an
# error part-way (doc/reliability-wakes.md); make check runs a short fixed
# part of each.
#   scripts/sweeps.sh [--lua X.Y] [--sanitizers] [--stride K] [--from N] [--raw]
#   - the allocation-failure sweep's second mode (test/alloc_sweep_test,
#     sweep "delivery"): one or two allocations fail at every K-th N and the
#     program goes on; every message delivered exactly once or its send
#     reported failed, every waiter woken;
#   - the interrupt sweep (test/interrupt_sweep.lua): the watchdog's "error"
#     interrupt requested at every K-th instruction of cosock's Lua code, the
#     same checks; --raw raises it at that instruction itself (stricter than
#     the watchdog, see the document).
# K defaults to 1 (every N: about a minute each on an idle machine), N to 1.
# Builds what it needs with scripts/build.sh (build/, build-luaX.Y/,
# build-asan*/ as scripts/test.sh names them). Exits 1 on a failure, which
# names the N to replay (--from N, and ALLOC_SWEEP_VERBOSE=1 or --verbose).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=${LUA_VERSION:-5.3}
sanitizers= stride=1 from=1 raw=
usage() { echo "usage: scripts/sweeps.sh [--lua X.Y] [--sanitizers] [--stride K] [--from N] [--raw]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--lua) [ $# -ge 2 ] || usage; version=$2; shift ;;
	--sanitizers) sanitizers=1 ;;
	--stride) [ $# -ge 2 ] || usage; stride=$2; shift ;;
	--from) [ $# -ge 2 ] || usage; from=$2; shift ;;
	--raw) raw=--raw ;;
	*) usage ;;
	esac
	shift
done
suffix= lua=lua$version
[ "$version" = 5.3 ] || suffix=-lua$version
[ "$version" = jit ] && { suffix=-luajit; lua=luajit; }
if [ -n "$sanitizers" ]; then
	dir=build-asan$suffix
	"$top/scripts/build.sh" "$dir" --enable-sanitizers LUA="$lua"
else
	dir=build$suffix
	"$top/scripts/build.sh" "$dir" LUA="$lua"
fi
cd "$top/$dir"
make -s test/alloc_sweep_test >/dev/null 2>&1 || echo "sweeps.sh: no test/alloc_sweep_test here (cmocka or liblua missing): the interrupt sweep only" >&2
abs_top_srcdir=$top abs_top_builddir=$top/$dir LUA=$lua
SANITIZER_PRELOAD=
[ -n "$sanitizers" ] && SANITIZER_PRELOAD=$(cc -print-file-name=libasan.so)
export abs_top_srcdir abs_top_builddir LUA SANITIZER_PRELOAD
status=0
if [ -x test/alloc_sweep_test ]; then
	echo "==== allocation sweep, delivery mode (every ${stride}th N from $from) ===="
	ALLOC_SWEEP_ONLY=delivery ALLOC_SWEEP_DELIVERY_STRIDE=$stride ALLOC_SWEEP_FROM=$from \
		./test/alloc_sweep_test || status=1
fi
echo "==== interrupt sweep${raw:+ (raw)} (every ${stride}th N from $from) ===="
INTERRUPT_SWEEP_STRIDE=$stride INTERRUPT_SWEEP_ARGS="--from $from $raw" \
	"$top/test/run-interrupt-sweep" || status=1
exit $status
