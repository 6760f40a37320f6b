#!/bin/sh
# Runs the programs in scripts/differential/*.lua against cosock (a checkout of
# the cosock repository) and against cosock-native (this tree's lua/ and
# build/), and shows a diff per program of what they print. Documented in
# doc/differential.md. Not part of `make check`.
#   scripts/differential.sh COSOCK_CHECKOUT [NAME...]
# NAME picks programs (e.g. channel try_protect); the default is all of them.
# Without a checkout (or with a path that is not one) it says so and exits 0.
# Exit status: 0 when every program printed the same on both, 1 otherwise.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
progs="$top/scripts/differential"
ref=${1:-}
if [ -z "$ref" ] || [ ! -f "$ref/cosock.lua" ]; then
	echo "differential.sh: no cosock checkout given${ref:+ ($ref has no cosock.lua)};" \
		"usage: scripts/differential.sh COSOCK_CHECKOUT [NAME...]. Nothing compared."
	exit 0
fi
shift
ref=$(cd "$ref" && pwd)
if [ ! -e "$top/build/src/cpath/cosock/core.so" ]; then
	echo "differential.sh: build cosock-native first (scripts/build.sh build)" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# TLS material for the programs that need it (tls.lua): a self-signed
# certificate for 127.0.0.1, made once per run.
if command -v openssl >/dev/null 2>&1; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
		-subj '/CN=127.0.0.1' >/dev/null 2>&1 && COSOCK_DIFF_CERTS=$work && export COSOCK_DIFF_CERTS
fi

# Output that legitimately differs: addresses, the library's own file names
# and line numbers, library and C frames of tracebacks (collapsed to one line),
# the clock, and the lines cosock-native adds to errors to name their task
# (a task's traceback ends with "(in task ...)"; a wait's error has
# "(task ...)" after cosock's line). Everything else is compared as printed.
normalise() {
	sed -e '/^	(in \(an unnamed \)\{0,1\}task[ ,]/d' -e '/^(task .*)$/d' \
		-e "s#$ref/#<lib>/#g" -e "s#$top/lua/#<lib>/#g" \
		-e 's#<lib>/[A-Za-z0-9_/.]*\.lua:[0-9]*:#<lib>:#g' \
		-e 's#<lib>/[A-Za-z0-9_/.]*\.lua#<lib>#g' \
		-e 's/0x[0-9a-fA-F]\{4,\}/0x?/g' \
		-e 's/^last wake:\t[0-9]*$/last wake:\t<time>/' |
	awk '/^\t(\[C\]|<lib>|\(\.\.\.tail calls\.\.\.\))/ { if (!lib) print "\t<library frames>"; lib = 1; next }
		{ lib = 0; print }'
}

run_ref() {
	LUA_PATH="$ref/?.lua;$ref/?/init.lua;;" timeout 30 lua5.3 "$1" 2>&1 || echo "[exit status $?]"
}
run_native() {
	LUA_PATH="$top/lua/?.lua;$top/lua/?/init.lua;;" LUA_CPATH="$top/build/src/cpath/?.so;;" \
		timeout 30 lua5.3 "$1" 2>&1 || echo "[exit status $?]"
}

if [ $# -gt 0 ]; then
	list=""
	for n in "$@"; do
		[ -f "$progs/${n%.lua}.lua" ] || { echo "differential.sh: no program $progs/${n%.lua}.lua" >&2; exit 2; }
		list="$list $progs/${n%.lua}.lua"
	done
else
	list=$(ls "$progs"/*.lua)
fi

same=0 differ=0 unstable=0
for p in $list; do
	name=$(basename "$p" .lua)
	cd "$progs"
	run_ref "$p" | normalise > "$work/$name.cosock"
	run_ref "$p" | normalise > "$work/$name.cosock2"
	run_native "$p" | normalise > "$work/$name.native"
	if ! cmp -s "$work/$name.cosock" "$work/$name.cosock2"; then
		# cosock itself printed two different things: the program depends on
		# something cosock does not fix (an order of pairs(), a timing).
		echo "== $name: cosock's output differs between two runs (program not deterministic)"
		diff -u "$work/$name.cosock" "$work/$name.cosock2" | sed 1,2d || true
		unstable=$((unstable + 1))
	fi
	if diff -u --label "$name (cosock)" --label "$name (cosock-native)" \
		"$work/$name.cosock" "$work/$name.native" > "$work/$name.diff"; then
		echo "== $name: same"
		same=$((same + 1))
	else
		echo "== $name: differs"
		cat "$work/$name.diff"
		differ=$((differ + 1))
	fi
done
echo "differential: $((same + differ)) programs, $same same, $differ differ, $unstable not deterministic on cosock"
[ "$differ" -eq 0 ] && [ "$unstable" -eq 0 ]
