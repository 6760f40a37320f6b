#!/bin/sh
# Runs deployed cosock code (SmartThings Edge drivers, community drivers,
# cosock/luxure and cosock/lustre, rtyle/st-edge's HTTP, UPnP and mDNS code),
# loaded unchanged from checkouts of their repositories,
# against local servers on 127.0.0.1, on cosock and on cosock-native (this
# tree's lua/ and build/), and shows a diff per case of what they print. The
# cases are scripts/real-clients/*.lua; documented in doc/real-clients.md. Not
# part of `make check`.
#   scripts/real-clients.sh --cosock DIR [--edge-drivers DIR] [--luxure DIR]
#       [--luncheon DIR] [--neturl DIR] [--st-edge DIR] [--lustre DIR]
#       [--mqtt-devices DIR] [--xml2lua DIR] [NAME...]
# A case whose checkouts were not given is skipped (each case's "-- needs:"
# line names them). Without --cosock it says so and exits 0.
# Exit status: 0 when every case run printed the same on both, 1 otherwise.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cases="$top/scripts/real-clients"
usage="usage: scripts/real-clients.sh --cosock DIR [--edge-drivers DIR] [--luxure DIR] [--luncheon DIR] [--neturl DIR] [--st-edge DIR] [--lustre DIR] [--mqtt-devices DIR] [--xml2lua DIR] [NAME...]"
ref="" RC_EDGE="" RC_LUXURE="" RC_LUNCHEON="" RC_NETURL="" RC_ST_EDGE="" RC_LUSTRE="" RC_MQTT_DEVICES="" RC_XML2LUA=""
abs() { (cd "$1" 2>/dev/null && pwd) || { echo "real-clients.sh: $1 is not a directory" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--cosock) ref=$2; shift 2 ;;
	--edge-drivers) RC_EDGE=$(abs "$2"); shift 2 ;;
	--luxure) RC_LUXURE=$(abs "$2"); shift 2 ;;
	--luncheon) RC_LUNCHEON=$(abs "$2"); shift 2 ;;
	--neturl) RC_NETURL=$(abs "$2"); shift 2 ;;
	--st-edge) RC_ST_EDGE=$(abs "$2"); shift 2 ;;
	--lustre) RC_LUSTRE=$(abs "$2"); shift 2 ;;
	--mqtt-devices) RC_MQTT_DEVICES=$(abs "$2"); shift 2 ;;
	--xml2lua) RC_XML2LUA=$(abs "$2"); shift 2 ;;
	--help|-h) echo "$usage"; exit 0 ;;
	--*) echo "real-clients.sh: unknown option $1; $usage" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ -z "$ref" ] || [ ! -f "$ref/cosock.lua" ]; then
	echo "real-clients.sh: no cosock checkout given${ref:+ ($ref has no cosock.lua)}; $usage. Nothing compared."
	exit 0
fi
ref=$(cd "$ref" && pwd)
export RC_EDGE RC_LUXURE RC_LUNCHEON RC_NETURL RC_ST_EDGE RC_LUSTRE RC_MQTT_DEVICES RC_XML2LUA
if [ ! -e "$top/build/src/cpath/cosock/core.so" ]; then
	echo "real-clients.sh: build cosock-native first (scripts/build.sh build)" >&2
	exit 2
fi
limit=${RC_TIME_LIMIT:-10}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# Beyond what compare.sh masks: the checkouts' locations and ports.
normalise_more() {
	sed -e "s#${RC_EDGE:-/nonexistent}/#<edge-drivers>/#g" -e "s#${RC_LUXURE:-/nonexistent}/#<luxure>/#g" \
		-e "s#${RC_LUNCHEON:-/nonexistent}/#<luncheon>/#g" -e "s#${RC_NETURL:-/nonexistent}/#<neturl>/#g" \
		-e "s#${RC_ST_EDGE:-/nonexistent}/#<st-edge>/#g" -e "s#${RC_LUSTRE:-/nonexistent}/#<lustre>/#g" \
		-e "s#${RC_MQTT_DEVICES:-/nonexistent}/#<mqtt-devices>/#g" -e "s#${RC_XML2LUA:-/nonexistent}/#<xml2lua>/#g" -e "s#$cases/#<cases>/#g" \
		-e 's/\(127\.0\.0\.1\|0\.0\.0\.0\):[0-9]\{1,5\}/\1:<port>/g'
}
# Each case runs in the empty work directory, so that ./?.lua finds nothing.
rundir=$work
. "$top/scripts/lib/compare.sh"

pick_programs "$cases" "$@"

same=0 differ=0 unstable=0 skipped=0
for p in $list; do
	name=$(basename "$p" .lua)
	missing=""
	for need in $(sed -n 's/^-- needs: //p' "$p"); do
		case $need in
		edge) [ -n "$RC_EDGE" ] || missing="$missing --edge-drivers" ;;
		luxure) [ -n "$RC_LUXURE" ] || missing="$missing --luxure" ;;
		luncheon) [ -n "$RC_LUNCHEON" ] || missing="$missing --luncheon" ;;
		neturl) [ -n "$RC_NETURL" ] || missing="$missing --neturl" ;;
		st_edge) [ -n "$RC_ST_EDGE" ] || missing="$missing --st-edge" ;;
		st_edge_xml2lua) [ -f "$RC_ST_EDGE/modules/xml2lua/xml2lua.lua" ] ||
			missing="$missing --st-edge(with-its-modules/xml2lua-submodule)" ;;
		lustre) [ -n "$RC_LUSTRE" ] || missing="$missing --lustre" ;;
		mqtt_devices) [ -n "$RC_MQTT_DEVICES" ] || missing="$missing --mqtt-devices" ;;
		xml2lua) [ -n "$RC_XML2LUA" ] || missing="$missing --xml2lua" ;;
		esac
	done
	if [ -n "$missing" ]; then
		echo "== $name: skipped (needs$missing)"
		skipped=$((skipped + 1))
		continue
	fi
	compare_program "$name" "$p"
done
echo "real-clients: $((same + differ)) cases run, $same same, $differ differ, $unstable not deterministic on cosock, $skipped skipped"
[ "$differ" -eq 0 ] && [ "$unstable" -eq 0 ]
