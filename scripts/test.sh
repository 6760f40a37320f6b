#!/bin/sh
# Builds cosock-native and runs every test: the cmocka unit tests (test/) and
# the busted specs (spec/), then prints each runner's summary and a total.
#   scripts/test.sh                  the normal build, in build/
#   scripts/test.sh --sanitizers     AddressSanitizer + UBSan build, in build-asan/
#   scripts/test.sh --valgrind       every test under valgrind memcheck
#   scripts/test.sh --no-fast-path   every test with the LuaSocket fast paths off
#                                    (COSOCK_NO_FAST_PATH=1: the method path)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
mode=${1:-}
case "$mode" in
"") dir=build; "$top/scripts/build.sh" build ;;
--sanitizers) dir=build-asan; "$top/scripts/build.sh" build-asan --enable-sanitizers ;;
--valgrind) dir=build; "$top/scripts/build.sh" build ;;
--no-fast-path) dir=build; "$top/scripts/build.sh" build; COSOCK_NO_FAST_PATH=1; export COSOCK_NO_FAST_PATH ;;
*) echo "usage: scripts/test.sh [--sanitizers|--valgrind|--no-fast-path]" >&2; exit 2 ;;
esac
cd "$top/$dir"
status=0
if [ "$mode" = --valgrind ]; then
	make -s check-valgrind > test-valgrind.log 2>&1 || status=$?
	logs=test-valgrind.log
else
	make -s check -j"$(nproc 2>/dev/null || echo 2)" || status=$?
	logs="test/*.log"
fi
echo "==== summaries ($dir) ===="
# shellcheck disable=SC2086
grep -hE '^\[  (PASSED|FAILED)  \]|^[0-9]+ success' $logs || true
# One closing line for the whole run, counted from the runners' own output.
# shellcheck disable=SC2086
cat $logs | awk -v status="$status" '
	/^\[  PASSED  \] [0-9]+ test/ { p += $4 }
	/^\[  FAILED  \] [0-9]+ test/ { f += $4 }
	/^[0-9]+ successes? \/ [0-9]+ failures? \/ [0-9]+ errors?/ { p += $1; f += $4 + $7; pend += $10 }
	END {
		if (status != 0 && f == 0) f = 1   # a runner died before its summary
		printf "%d passed, %d failed, %d skipped\n", p, f, pend
	}'
if [ "$status" -ne 0 ]; then
	echo "test.sh: failures; logs are in $top/$dir (test/*.log, test-suite.log)" >&2
	# shellcheck disable=SC2086
	tail -n 60 $logs >&2 || true
fi
exit "$status"
