#!/bin/sh
# Builds the release's Debian source package, 3.0 (quilt), from the release
# tarball, as a sponsor would upload it: the tarball (make dist in a clean
# copy of the checkout, or --tarball FILE) becomes
# lua-cosock-native_VERSION.orig.tar.gz, debian/ of the checkout goes beside
# it, dpkg-source -b makes the .dsc and .debian.tar.xz. Then (unless
# --source-only) dpkg-buildpackage builds every binary package from that
# source (all Lua versions, the -dev and the arch:all -doc), and lintian -I
# --pedantic checks the whole upload (.changes): it must say nothing but the
# tags of what only a person can supply (doc/releasing.md), each listed
# below; anything else fails the run. Nothing is installed but the build
# dependencies (scripts/install-deps.sh --release).
#   scripts/build-source-package.sh [--tarball FILE] [--out DIR] [--source-only]
#       [--maintainer 'NAME <ADDRESS>'] [--itp NUMBER] [--homepage URL]
#     --tarball FILE  the release tarball (default: make dist here)
#     --out DIR       keeps the tarball, the source package and the .debs in DIR
#     --source-only   the source package and lintian on it; no binary build
#     --maintainer, --itp, --homepage  the values only a person can supply,
#                     put in place of debian/'s placeholders (for a real
#                     upload; doc/releasing.md)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
usage() {
	echo "usage: scripts/build-source-package.sh [--tarball FILE] [--out DIR] [--source-only]" \
		"[--maintainer 'NAME <ADDRESS>'] [--itp NUMBER] [--homepage URL]" >&2
	exit 2
}
tarball= out= source_only=no maintainer= itp= homepage=
while [ $# -gt 0 ]; do
	case "$1" in
	--tarball) [ $# -ge 2 ] || usage; tarball=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift ;;
	--source-only) source_only=yes ;;
	--maintainer) [ $# -ge 2 ] || usage; maintainer=$2; shift ;;
	--itp) [ $# -ge 2 ] || usage; itp=$2; shift ;;
	--homepage) [ $# -ge 2 ] || usage; homepage=$2; shift ;;
	*) usage ;;
	esac
	shift
done
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
"$top/scripts/install-deps.sh" --release
start=$(date +%s)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
debversion=$(cd "$top" && dpkg-parsechangelog -SVersion)
case "$debversion" in
"$version"-*) ;;
*) echo "build-source-package: debian/changelog's $debversion is not of configure.ac's $version" >&2; exit 1 ;;
esac

# 1. The release tarball: make dist in a copy of the tracked files (a clean
# checkout: nothing built, nothing untracked), configured for the primary
# target. Without pandoc on the PATH, as make dist must work without it.
if [ -z "$tarball" ]; then
	mkdir "$tmp/checkout"
	(cd "$top" && git ls-files -z | tar --null -T - -cf -) | tar -C "$tmp/checkout" -xf -
	echo "build-source-package: make dist of cosock-native $version (log in $tmp/dist.log)"
	mkdir "$tmp/nopandoc"
	(cd "$tmp/checkout" && ./bootstrap && ./configure -q LUA=lua5.3 PANDOC="$tmp/nopandoc/pandoc" &&
		make -s dist PANDOC="$tmp/nopandoc/pandoc") > "$tmp/dist.log" 2>&1 || {
		tail -n 40 "$tmp/dist.log" >&2
		echo "build-source-package: make dist failed" >&2
		exit 1
	}
	tarball=$tmp/checkout/cosock-native-$version.tar.gz
fi
[ -f "$tarball" ] || { echo "build-source-package: no tarball $tarball" >&2; exit 1; }
# The tarball holds sources only: no generated HTML, no debian/.
if tar -tzf "$tarball" | grep -E '\.html$|/debian/' | grep -v '^[^/]*/doc/site/template\.html$'; then
	echo "build-source-package: the tarball holds generated HTML or debian/ (above)" >&2
	exit 1
fi

# 2. The source package: the orig tarball, the unpacked tree, debian/.
work=$tmp/pkg
mkdir "$work"
cp "$tarball" "$work/lua-cosock-native_$version.orig.tar.gz"
tar -C "$work" -xzf "$tarball"
src=$work/lua-cosock-native-$version
mv "$work/cosock-native-$version" "$src"
(cd "$top" && git ls-files -z debian | tar --null -T - -cf -) | tar -C "$src" -xf -
# The values only a person can supply, when given, in place of the
# placeholders (doc/releasing.md lists each and where it goes).
if [ -n "$maintainer" ]; then
	sed -i "s|MAINTAINER NAME (placeholder) <maintainer@cosock-native.invalid>|$maintainer|" \
		"$src/debian/control" "$src/debian/changelog" "$src/debian/copyright"
fi
if [ -n "$homepage" ]; then
	homepage=${homepage%/}
	sed -i "s|https://cosock-native.invalid|$homepage|" "$src/debian/control" \
		"$src/debian/copyright" "$src/debian/watch" "$src/debian/upstream/metadata"
fi
if [ -n "$itp" ]; then
	sed -i "0,/^  \* Initial release\.$/s//  * Initial release. (Closes: #$itp)/" "$src/debian/changelog"
fi
echo "build-source-package: dpkg-source -b (3.0 (quilt)) of lua-cosock-native $debversion"
(cd "$work" && dpkg-source -b "lua-cosock-native-$version") > "$tmp/source.log" 2>&1 || {
	cat "$tmp/source.log" >&2
	echo "build-source-package: dpkg-source failed" >&2
	exit 1
}
dsc=$work/lua-cosock-native_$debversion.dsc
sed -n 's/^ [0-9a-f]\{64\} [0-9]* /build-source-package: made /p' "$dsc" | sort -u

# 3. The binary packages from that source (its build dependencies first).
if [ "$source_only" = no ]; then
	$SUDO apt-get build-dep -y -qq "$dsc" > /dev/null
	echo "build-source-package: dpkg-buildpackage -us -uc from the source package (log in $tmp/build.log)"
	(cd "$src" && dpkg-buildpackage -us -uc) > "$tmp/build.log" 2>&1 || {
		tail -n 60 "$tmp/build.log" >&2
		echo "build-source-package: dpkg-buildpackage failed" >&2
		exit 1
	}
	changes=$(ls "$work"/lua-cosock-native_"$debversion"_*.changes | grep -v '_source\.changes$')
	# The source-only upload a sponsor takes (the archive builds the binaries).
	(cd "$src" && dpkg-genchanges -S -sa) > "$work/lua-cosock-native_${debversion}_source.changes" 2> "$tmp/genchanges.log" || {
		cat "$tmp/genchanges.log" >&2
		echo "build-source-package: dpkg-genchanges -S failed" >&2
		exit 1
	}
	grep -E '^Test:|answers correct' "$tmp/build.log" | sed 's/^/build-source-package: build-time test: /'
	for d in "$work"/*.deb; do echo "build-source-package: built $(basename "$d")"; done
else
	changes=$dsc
fi

if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$tarball" "$work"/lua-cosock-native_* "$out/" 2>/dev/null || true
	[ "$source_only" = yes ] || cp "$work"/*.deb "$out/"
	echo "build-source-package: kept in $out (before lintian's verdict)"
fi

# 4. lintian, everything it can say. Expected: only the tags of what only a
# person can supply, while the placeholders are in place.
expected="initial-upload-closes-no-bugs"
echo "build-source-package: lintian -I --pedantic $(basename "$changes")"
lintian -I --pedantic --profile debian "$changes" > "$tmp/lintian.log" 2>&1 || true
sed 's/^/build-source-package: lintian: /' "$tmp/lintian.log"
unexpected=$(grep -E '^[EWIPX]: ' "$tmp/lintian.log" | grep -v -E ": ($(echo $expected | tr ' ' '|'))( |$)" || true)
if [ -n "$unexpected" ]; then
	echo "build-source-package: lintian reported more than what only a person can supply:" >&2
	echo "$unexpected" >&2
	exit 1
fi

echo "build-source-package: the source package builds from the release tarball and lintian is clean" \
	"but for what only a person can supply ($(($(date +%s) - start)) s)"
