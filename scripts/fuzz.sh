#!/bin/sh
# The protocol fuzzer (test/fuzz.lua) against the build tree, for as long as
# you like; make check runs a short fixed-seed part of it (spec/fuzz_spec.lua).
#   scripts/fuzz.sh [--seed S] [--count N] [--sanitizers]
# Runs N sequences (default 10000) from seed S (default: from the clock, and
# printed). On a failure it prints the seed and the broken invariant and exits
# 1: replay it with --seed S --count 1, then make it a spec under
# spec/regress/. --sanitizers runs against build-asan/ with ASan preloaded
# (build it first with scripts/test.sh --sanitizers or scripts/build.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
seed=$(date +%s)
count=10000
dir=build
preload=
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--sanitizers) dir=build-asan; shift ;;
	*) echo "usage: scripts/fuzz.sh [--seed S] [--count N] [--sanitizers]" >&2; exit 2 ;;
	esac
done
[ -f "$top/$dir/src/cpath/cosock/core.so" ] || {
	echo "fuzz.sh: no build in $top/$dir (run scripts/build.sh first)" >&2; exit 2; }
if [ "$dir" = build-asan ]; then
	preload=$(cc -print-file-name=libasan.so)
	export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
fi
echo "fuzz: $count sequences from seed $seed ($dir)"
cd "$top"
LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;$top/test/?.lua;;" \
LUA_CPATH="$top/$dir/src/cpath/?.so;;" \
LD_PRELOAD="$preload" exec lua5.3 test/fuzz.lua "$seed" "$count"
