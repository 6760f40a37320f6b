#!/bin/sh
# Checks the layers of the C sources (doc/architecture.md, "The layers"):
#   src/lib/       the Lua-free engine: includes no Lua header and nothing
#                  of the folders below
#   src/compat/    what differs between the Lua C APIs: nothing of loop/ or
#                  features/
#   src/loop/      the loop core: nothing of features/ (features attach
#                  through loop/hooks.h)
#   src/features/  may include any of the above
# and that no two folders hold a header of the same name (the build finds
# headers by name across them). src/core.c, the module entry, names them all.
# Prints what breaks a rule, then one cmocka-style summary line (for
# scripts/test-summary.sh); exits 1 when a rule is broken.
#   scripts/check-layers.sh [SRC]     (SRC defaults to the tree's src/)
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}
for d in lib compat loop features; do
	[ -d "$src/$d" ] || { echo "check-layers: no folder $src/$d" >&2; echo "[  FAILED  ] 1 test(s)."; exit 1; }
done
bad=0
# The folder (layer) of a quoted include, "" when it is none of ours.
layer_of() {
	case "$1" in
	lib/*) echo lib; return ;;
	config.h) return ;;
	esac
	for d in compat loop features; do
		[ -f "$src/$d/$1" ] && { echo "$d"; return; }
	done
}
# check FOLDER FORBIDDEN...: no file of FOLDER includes a header of those.
check() {
	folder=$1
	shift
	for f in "$src/$folder"/*.[ch]; do
		[ -f "$f" ] || continue
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			l=$(layer_of "$h")
			for no in "$@"; do
				if [ "$l" = "$no" ]; then
					echo "check-layers: ${f#"$src"/} includes $h (src/$no/): a file of src/$folder/ must not" >&2
					bad=$((bad + 1))
				fi
			done
		done
	done
}
check lib compat loop features
check compat loop features
check loop features
# The engine knows nothing of Lua.
for f in "$src"/lib/*.[ch]; do
	if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib|luajit)\.h[>"]' "$f"; then
		echo "check-layers: ${f#"$src"/} includes a Lua header: src/lib/ is Lua-free" >&2
		bad=$((bad + 1))
	fi
done
# One header per name.
dups=$(for d in lib compat loop features; do ls "$src/$d" | grep '\.h$'; done | sort | uniq -d)
for h in $dups; do
	echo "check-layers: two folders hold a header named $h" >&2
	bad=$((bad + 1))
done
if [ "$bad" -gt 0 ]; then
	echo "[  FAILED  ] $bad test(s)."
	exit 1
fi
echo "[  PASSED  ] 1 test(s)."
