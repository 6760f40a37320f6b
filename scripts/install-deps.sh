#!/bin/sh
# Installs the Debian packages cosock-native needs to build and test (and,
# with --bench, to run the benchmarks against cqueues). Idempotent: when every
# package is present it installs nothing and needs no network.
set -eu

PACKAGES="gcc make autoconf automake libtool pkg-config autoconf-archive
lua5.3 liblua5.3-dev lua-socket lua-sec lua-busted libcmocka-dev openssl valgrind"
[ "${1:-}" = "--bench" ] && PACKAGES="$PACKAGES lua-cqueues time"

missing=
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
