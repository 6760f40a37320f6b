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

rundir=$progs limit=30
. "$top/scripts/lib/compare.sh"

pick_programs "$progs" "$@"

same=0 differ=0 unstable=0
for p in $list; do
	compare_program "$(basename "$p" .lua)" "$p"
done
echo "differential: $((same + differ)) programs, $same same, $differ differ, $unstable not deterministic on cosock"
[ "$differ" -eq 0 ] && [ "$unstable" -eq 0 ]
