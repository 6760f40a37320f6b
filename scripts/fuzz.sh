#!/bin/sh
# The fuzzers against the build tree, for as long as you like; make check runs
# a short fixed-seed part of each (spec/fuzz_spec.lua, spec/reentry_fuzz_spec.lua).
#   scripts/fuzz.sh [--reentry|--finalizer] [--seed S] [--count N] [--sanitizers] [--lua X.Y]
# Without a mode: the protocol fuzzer (test/fuzz.lua). --reentry: callback
# points of the loop call public functions; --finalizer: finalizers run at
# the loop's allocations do (both test/reentry.lua). Runs N sequences
# (default 10000, 1000 for the two others) from seed S (default: from the
# clock, and printed). On a failure it prints the seed and the broken
# invariant and exits 1: replay it with the same mode and --seed S --count 1,
# then make it a spec under spec/regress/. --sanitizers runs against
# build-asan/ with ASan preloaded (build it first with scripts/test.sh
# --sanitizers or scripts/build.sh); --lua 5.4 against build-lua5.4/ (or
# build-asan-lua5.4/), as scripts/test.sh names them.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
seed=$(date +%s)
count=
mode=
asan=
version=5.3
usage() {
	echo "usage: scripts/fuzz.sh [--reentry|--finalizer] [--seed S] [--count N] [--sanitizers] [--lua X.Y]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
	--count) [ $# -ge 2 ] || usage; count=$2; shift 2 ;;
	--sanitizers) asan=-asan; shift ;;
	--lua) [ $# -ge 2 ] || usage; version=$2; shift 2 ;;
	--reentry|--finalizer) [ -z "$mode" ] || usage; mode=${1#--}; shift ;;
	*) usage ;;
	esac
done
suffix=
lua=lua$version
[ "$version" = 5.3 ] || suffix=-lua$version
[ "$version" = jit ] && { suffix=-luajit; lua=luajit; }
dir=build$asan$suffix
preload=
[ -f "$top/$dir/src/cpath/cosock/core.so" ] || {
	echo "fuzz.sh: no build in $top/$dir (run scripts/build.sh first)" >&2; exit 2; }
if [ -n "$asan" ]; then
	preload=$(cc -print-file-name=libasan.so)
	export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
fi
cd "$top"
export LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;$top/test/?.lua;;"
export LUA_CPATH="$top/$dir/src/cpath/?.so;;"
export LD_PRELOAD="$preload"
if [ -z "$mode" ]; then
	count=${count:-10000}
	echo "fuzz: $count sequences from seed $seed ($dir)"
	exec "$lua" test/fuzz.lua "$seed" "$count"
fi
count=${count:-1000}
echo "fuzz: $count $mode sequences from seed $seed ($dir)"
exec "$lua" test/reentry.lua "$mode" "$seed" "$count"
