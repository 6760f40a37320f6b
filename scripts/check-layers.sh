#!/bin/sh
# Checks the layers of the C sources (doc/architecture.md, "The layers"):
#   src/lib/       the Lua-free engine: includes no Lua header and nothing
#                  of the folders below
#   src/compat/    what differs between the Lua C APIs: nothing of loop/ or
#                  features/
#   src/loop/      the loop core: nothing of features/ (features attach
#                  through loop/hooks.h)
#   src/features/  may include any of the above
# that no two folders hold a header of the same name (the build finds
# headers by name across them), and that inside src/features/ and src/loop/
# no files include each other's headers in a circle (a file and its header
# are one node; the calls between them run one way: the features through
# the hook interface, the loop's pass down to park, the fd index and the
# tasks). src/core.c, the module entry, names them all.
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
# No circle of includes inside a folder: tsort finds one. An edge "a b":
# a.c or a.h includes b.h (b's own header; b.c is b's other half).
for d in features loop; do
	edges=$(for f in "$src/$d"/*.[ch]; do
		[ -f "$f" ] || continue
		n=$(basename "$f"); n=${n%.*}
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			[ -f "$src/$d/$h" ] && [ "${h%.h}" != "$n" ] && echo "$n ${h%.h}"
		done
	done | sort -u)
	[ -n "$edges" ] || continue
	if ! circle=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$circle" ]; then
		echo "check-layers: files of src/$d/ include each other's headers in a circle:" >&2
		echo "$circle" | sed -n 's/^tsort: \([^ :]*\)$/  \1/p' >&2
		bad=$((bad + 1))
	fi
done
if [ "$bad" -gt 0 ]; then
	echo "[  FAILED  ] $bad test(s)."
	exit 1
fi
echo "[  PASSED  ] 1 test(s)."
