#!/bin/sh
# Builds cosock-native and runs every test: the cmocka unit tests (test/) and
# the busted specs (spec/), then prints each runner's summary and a total.
#   scripts/test.sh [--lua X.Y] [--sanitizers|--valgrind|--no-fast-path]
#     (none)         the normal build, in build/
#     --sanitizers   AddressSanitizer + UBSan build, in build-asan/
#     --valgrind     every test under valgrind memcheck (the normal build)
#     --no-fast-path every test with the LuaSocket fast paths off
#                    (COSOCK_NO_FAST_PATH=1: the wrappers call LuaSocket's methods)
#     --no-direct-park every test on a build where no wait parks directly
#                    (-DCN_NO_DIRECT_PARK, in build-nodirect/): each goes
#                    through the yield tuple and setwaker, as a yield a task
#                    forwards does, and as every wait on Lua 5.1 and 5.2
#     --lua X.Y      for Lua X.Y (5.1, 5.2, 5.3, 5.4, or jit for LuaJIT 2.1;
#                    default $LUA_VERSION, else 5.3); a version other than
#                    5.3 builds in build-luaX.Y/ and build-asan-luaX.Y/
#                    (LuaJIT: build-luajit/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/test.sh [--lua X.Y] [--sanitizers|--valgrind|--no-fast-path|--no-direct-park]" >&2; exit 2; }
version=${LUA_VERSION:-5.3}
mode=
while [ $# -gt 0 ]; do
	case "$1" in
	--lua) [ $# -ge 2 ] || usage; version=$2; shift ;;
	--lua=*) version=${1#--lua=} ;;
	--sanitizers|--valgrind|--no-fast-path|--no-direct-park) [ -z "$mode" ] || usage; mode=$1 ;;
	*) usage ;;
	esac
	shift
done
suffix=
lua=lua$version
[ "$version" = 5.3 ] || suffix=-lua$version
[ "$version" = jit ] && { suffix=-luajit; lua=luajit; }
case "$mode" in
--no-direct-park) dir=build-nodirect$suffix ;;
--sanitizers) dir=build-asan$suffix ;;
*) dir=build$suffix ;;
esac
# What installing and building print goes to a log, shown when they fail;
# so does make check's own list of tests (the summaries below say it all).
mkdir -p "$top/$dir"
setup_log=$top/$dir/test-setup.log
show_failed() { # LOG WHAT
	echo "test.sh: $2 failed; the last lines of $1:" >&2
	tail -n 60 "$1" >&2
	exit 1
}
echo "test.sh: installing what is missing and building in $dir/ (Lua $version; output in $dir/test-setup.log)"
{
	"$top/scripts/install-deps.sh" --lua "$version" &&
	case "$mode" in
	""|--valgrind|--no-fast-path) "$top/scripts/build.sh" "$dir" LUA="$lua" ;;
	--no-direct-park) "$top/scripts/build.sh" "$dir" LUA="$lua" CFLAGS="-g -O2 -DCN_NO_DIRECT_PARK" ;;
	--sanitizers) "$top/scripts/build.sh" "$dir" --enable-sanitizers LUA="$lua" ;;
	esac
} > "$setup_log" 2>&1 || show_failed "$setup_log" "installing or building (in $dir)"
if [ "$mode" = --no-fast-path ]; then
	COSOCK_NO_FAST_PATH=1
	export COSOCK_NO_FAST_PATH
fi
cd "$top/$dir"
status=0
if [ "$mode" = --valgrind ]; then
	make -s check-valgrind > test-valgrind.log 2>&1 || status=$?
	logs=test-valgrind.log
else
	rm -f test/*.log test/*.trs                # (a test configure left out keeps no old log)
	make -s check -j"$(nproc 2>/dev/null || echo 2)" > test-check.log 2>&1 || status=$?
	logs="test/*.log"
fi
echo "==== summaries ($dir, Lua $version) ===="
# Each summary after the program it belongs to, and one closing line.
# shellcheck disable=SC2086
"$top/scripts/test-summary.sh" "$status" $logs
if [ "$status" -ne 0 ]; then
	echo "test.sh: failures; logs are in $top/$dir (test/*.log, test-suite.log, test-check.log)" >&2
	grep -E '^(FAIL|ERROR|XPASS)' test-check.log >&2 || true
	# Each failed spec whole (busted's Failure/Error blocks), each failed
	# cmocka test's lines, and the end of the logs.
	# shellcheck disable=SC2086
	grep -h -A12 -E '^(Failure|Error) ->' $logs >&2 || true
	# shellcheck disable=SC2086
	grep -h -E '^(ERROR|\[  ERROR   \]|\[  FAILED  \])' $logs >&2 || true
	# shellcheck disable=SC2086
	tail -n 30 $logs >&2 || true
fi
exit "$status"
