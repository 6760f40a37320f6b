#!/bin/sh
# Runs LuaSocket's own tests, from a checkout of LuaSocket, through the
# wrappers: with `socket` replaced by cosock.socket inside a task, on
# cosock-native (this tree's lua/ and build/) and on cosock 0.2.0 (a
# checkout, when given), beside LuaSocket itself, and prints every test whose
# outcome differs. doc/luasocket-suite.md lists those and why. Not part of
# `make check` or CI (it takes about two minutes, most of it the suite's own
# timeouts, and needs the checkouts).
#   scripts/luasocket-tests.sh --luasocket DIR [--cosock DIR] [--keep DIR]
#     --luasocket DIR  a LuaSocket checkout (lunarmodules/luasocket); it is
#                      copied and built there with LUASOCKET_DEBUG, as its
#                      test/testclnt.lua demands (the debug build returns the
#                      time each send and receive took as a further value)
#     --cosock DIR     a cosock checkout (cosock/cosock, 0.2.0), to compare
#     --keep DIR       keeps each run's output in DIR
# The tests: test/testclnt.lua against test/testsrvr.lua (the server always
# on LuaSocket itself), each test call of testclnt.lua reported on its own
# (scripts/luasocket-tests/run.lua); then the smaller test files, each run
# whole and its output compared with LuaSocket's. Lua 5.3 (LuaSocket's
# debug build is made for it). Exit status: 0 when it ran (differences are
# the report, not a failure), 2 for bad arguments or a missing build.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/luasocket-tests.sh --luasocket DIR [--cosock DIR] [--keep DIR]"
ls_src="" ref="" keep=""
abs() { (cd "$1" 2>/dev/null && pwd) || { echo "luasocket-tests: $1 is not a directory" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--luasocket) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; ls_src=$(abs "$2"); shift 2 ;;
	--cosock) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; ref=$(abs "$2"); shift 2 ;;
	--keep) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; keep=$2; shift 2 ;;
	--help|-h) echo "$usage"; exit 0 ;;
	*) echo "luasocket-tests: unknown argument $1; $usage" >&2; exit 2 ;;
	esac
done
[ -n "$ls_src" ] && [ -f "$ls_src/test/testclnt.lua" ] ||
	{ echo "luasocket-tests: no LuaSocket checkout given (its test/testclnt.lua); $usage" >&2; exit 2; }
[ -z "$ref" ] || [ -f "$ref/cosock.lua" ] || { echo "luasocket-tests: $ref has no cosock.lua" >&2; exit 2; }
[ -e "$top/build/src/cpath/cosock/core.so" ] ||
	{ echo "luasocket-tests: build cosock-native first (scripts/build.sh)" >&2; exit 2; }
lua=lua5.3
limit=${LS_TIME_LIMIT:-120}
work=$(mktemp -d)
server=
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# 1. LuaSocket with LUASOCKET_DEBUG, built in a copy of the checkout.
echo "luasocket-tests: building LuaSocket ($(git -C "$ls_src" describe --always 2>/dev/null || echo checkout)) with LUASOCKET_DEBUG for Lua 5.3"
cp -r "$ls_src" "$work/luasocket"
(cd "$work/luasocket" && make -C src linux DEBUG=DEBUG LUAV=5.3 LUAINC_linux=/usr/include/lua5.3 &&
	make -C src install DEBUG=DEBUG LUAV=5.3 prefix="$work/ls") > "$work/ls-build.log" 2>&1 ||
	{ tail -n 30 "$work/ls-build.log" >&2; echo "luasocket-tests: the LuaSocket build failed" >&2; exit 2; }
ls_path="$work/ls/share/lua/5.3/?.lua;$work/ls/share/lua/5.3/?/init.lua"
ls_cpath="$work/ls/lib/lua/5.3/?.so"
tests=$work/luasocket/test

impls="luasocket native"
[ -z "$ref" ] || impls="luasocket cosock native"
# Runs FILE (in LuaSocket's test/) on IMPL with the harness; output in OUT.
run() {
	impl=$1 file=$2 out=$3
	shift 3
	case $impl in
	luasocket) path="$ls_path;;" cpath="$ls_cpath;;" ;;
	cosock) path="$ref/?.lua;$ref/?/init.lua;$ls_path;;" cpath="$ls_cpath;;" ;;
	native) path="$top/lua/?.lua;$top/lua/?/init.lua;$ls_path;;" cpath="$top/build/src/cpath/?.so;$ls_cpath;;" ;;
	esac
	(cd "$tests" && LUA_PATH_5_3="$path" LUA_CPATH_5_3="$cpath" \
		timeout "$limit" "$lua" "$top/scripts/luasocket-tests/run.lua" "$impl" "$file" "$@") > "$out" 2>&1 ||
		echo "== status $?" >> "$out"
}

# 2. testclnt.lua against testsrvr.lua (LuaSocket itself), once per
# implementation, each test call reported (run.lua's guard). A run stopped at
# its time limit in a call that never returned goes on from the next call,
# with a new server.
start_server() {
	(cd "$tests" && LUA_PATH_5_3="$ls_path;;" LUA_CPATH_5_3="$ls_cpath;;" exec "$lua" testsrvr.lua) \
		> "$work/server.$1" 2>&1 &
	server=$!
	i=0
	until grep -q "waiting for client" "$work/server.$1" 2>/dev/null || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
stop_server() {
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	server=
}
for impl in $impls; do
	LS_RESULTS=$work/res.$impl LS_FROM=1
	export LS_RESULTS LS_FROM
	: > "$LS_RESULTS"
	while :; do
		echo "luasocket-tests: testclnt.lua on $impl from test call $LS_FROM (the server on LuaSocket)"
		start_server "$impl.$LS_FROM"
		run "$impl" testclnt.lua "$work/clnt.$impl.$LS_FROM" --guard
		alive=yes
		kill -0 "$server" 2>/dev/null || alive=no
		stop_server
		last=$(sed -n 's/^start \([0-9]*\) .*/\1/p' "$LS_RESULTS" | tail -n 1)
		if [ -n "$last" ] && ! grep -q "^done $last " "$LS_RESULTS"; then
			echo "done $last FAIL: never returned (the run was stopped after ${limit} s)" >> "$LS_RESULTS"
			LS_FROM=$((last + 1))
			continue
		fi
		# The server (LuaSocket's testsrvr.lua) dies on an assertion when a
		# test leaves its protocol (its log says which); the calls after
		# that only meet a refused connection: those run again, from the
		# first one, with a new server (the call that broke it keeps its
		# outcome).
		if [ "$alive" = no ]; then
			first=$(sed -n 's/^done \([0-9]*\) FAIL: connection refused$/\1/p' "$LS_RESULTS" | head -n 1)
			if [ -n "$first" ] && [ "$first" -gt "$LS_FROM" ]; then
				echo "luasocket-tests: the server died during the run ($(grep -m1 -i 'error\|assert' "$work/server.$impl.$LS_FROM" || echo 'no message')): from call $first again"
				awk -v k="$first" '{ split($0, f, " "); if (f[2] + 0 < k) print }' "$LS_RESULTS" > "$work/res.tmp"
				mv "$work/res.tmp" "$LS_RESULTS"
				LS_FROM=$first
				continue
			fi
		fi
		break
	done
done
echo
echo "testclnt.lua: test calls whose outcome differs from LuaSocket's"
n=$(grep -c '^start ' "$work/res.luasocket" || true)
differ=0
i=1
while [ "$i" -le "$n" ]; do
	name=$(sed -n "s/^start $i //p" "$work/res.luasocket")
	base=$(sed -n "s/^done $i //p" "$work/res.luasocket")
	line="" d=0
	for impl in $impls; do
		o=$(sed -n "s/^done $i //p" "$work/res.$impl")
		[ -n "$o" ] || o="(not run)"
		[ "$o" = "$base" ] || d=1
		line="$line
    $impl: $o"
	done
	if [ "$d" = 1 ]; then
		differ=$((differ + 1))
		echo "  #$i $name$line"
	fi
	i=$((i + 1))
done
for impl in $impls; do
	echo "testclnt.lua on $impl: $(grep -c '^done [0-9]* ok$' "$work/res.$impl" || true) of $n test calls pass"
done

# 3. The smaller test files, each whole, compared with LuaSocket's output.
# (Addresses, ports and times masked; the harness's own lines kept.)
small="hello.lua excepttest.lua test_bind.lua test_getaddrinfo.lua test_socket_error.lua
tcp-getoptions udp-zero-length-send udp-zero-length-send-recv ltn12test.lua mimetest.lua
stufftest.lua urltest.lua"
normalise() {
	sed -e 's/0x[0-9a-fA-F]\{4,\}/0x?/g' -e 's/[0-9]*\.[0-9]*s\b/<time>s/g' \
		-e 's/\(127\.0\.0\.1\|0\.0\.0\.0\|::\)\([ \t:]*\)[0-9]\{4,5\}/\1\2<port>/g' \
		-e "s#$top/lua/#<lib>/#g" ${ref:+-e "s#$ref/#<lib>/#g"} -e "s#$work/ls/#<ls>/#g" \
		-e 's#<lib>/[A-Za-z0-9_/.]*\.lua:[0-9]*:#<lib>:#g' "$1"
}
echo
echo "the smaller test files: output compared with LuaSocket's"
same_small=0 differ_small=0
for t in $small; do
	[ -f "$tests/$t" ] || { echo "  $t: not in this checkout"; continue; }
	for impl in $impls; do run "$impl" "$t" "$work/small.$impl.$t"; done
	run luasocket "$t" "$work/small.luasocket2.$t"
	normalise "$work/small.luasocket.$t" > "$work/n.luasocket"
	normalise "$work/small.luasocket2.$t" > "$work/n.luasocket2"
	# Output that differs between two runs on LuaSocket itself (a table
	# printed in pairs order): only the last line (the status) is compared.
	steady=yes
	if ! cmp -s "$work/n.luasocket" "$work/n.luasocket2"; then
		steady=no
		echo "  $t: not the same twice on LuaSocket: only the last line compared"
		tail -n 1 "$work/n.luasocket" > "$work/n.tmp" && mv "$work/n.tmp" "$work/n.luasocket"
	fi
	for impl in $impls; do
		[ "$impl" = luasocket ] && continue
		normalise "$work/small.$impl.$t" > "$work/n.$impl"
		[ "$steady" = yes ] || { tail -n 1 "$work/n.$impl" > "$work/n.tmp" && mv "$work/n.tmp" "$work/n.$impl"; }
		if cmp -s "$work/n.luasocket" "$work/n.$impl"; then
			echo "  $t on $impl: same"
			same_small=$((same_small + 1))
		else
			echo "  $t on $impl: differs (-LuaSocket +$impl)"
			diff -u "$work/n.luasocket" "$work/n.$impl" | sed -n '3,$p' | sed 's/^/      /'
			differ_small=$((differ_small + 1))
		fi
	done
done
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$work"/clnt.* "$work"/res.* "$work"/small.* "$work"/server.* "$keep/"
	echo "luasocket-tests: outputs kept in $keep"
fi
echo "luasocket-tests: testclnt.lua: $differ of $n test calls differ somewhere; smaller files: $same_small same, $differ_small differ"
