#!/bin/sh
# copas-clients.sh --copas DIR [--timerwheel DIR] [--websockets DIR]
#                  [--luamqtt DIR] [--lua LUA] [NAME...]
#
# Runs real programs with copas backends, loaded unchanged from checkouts of
# their repositories, on copas 4.11 (DIR/src) and on cosock-native's copas
# API (lua/copas-compat first on LUA_PATH), and shows whether both printed
# the same. The cases are scripts/copas-clients/*.lua (each names what it
# needs on its "-- needs:" line):
#   websockets  lipp/lua-websockets: its copas server and copas client
#   mqtt        xHasKx/luamqtt: its copas connector, against a local
#               mosquitto this script starts (Debian package mosquitto)
# A case whose checkout was not given is skipped. Documented in doc/copas.md.
# Exit status: 0 when every case run printed the same on both, 1 otherwise.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
copas= tw= ws= mq= lua=lua5.3
while [ $# -gt 0 ]; do
  case "$1" in
    --copas) copas=$2; shift 2 ;;
    --timerwheel) tw=$2; shift 2 ;;
    --websockets) ws=$2; shift 2 ;;
    --luamqtt) mq=$2; shift 2 ;;
    --lua) lua=$2; shift 2 ;;
    --*) echo "usage: $0 --copas DIR [--timerwheel DIR] [--websockets DIR] [--luamqtt DIR] [--lua LUA] [NAME...]" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$copas" ] && [ -f "$copas/src/copas.lua" ] || { echo "$0: --copas DIR: a copas 4.11 checkout" >&2; exit 2; }
copas=$(cd "$copas" && pwd)
[ -n "$tw" ] || tw="$copas/../timerwheel"
[ -f "$here/build/src/cpath/cosock/core.so" ] || { echo "$0: build first (scripts/build.sh)" >&2; exit 2; }
names=${*:-websockets mqtt}

work=$(mktemp -d /tmp/copas-clients.XXXXXX)
mpid=
cleanup() { [ -n "$mpid" ] && kill "$mpid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM

copas_path="$copas/src/?.lua;$tw/src/?.lua;$tw/src/?/init.lua"
ours_path="$here/lua/copas-compat/?.lua;$here/lua/?.lua;$here/lua/?/init.lua"
port=$((21000 + $$ % 10000)) # (below the ephemeral range: no client socket holds it)
fail=0
for name in $names; do
  case $name in
    websockets) [ -n "$ws" ] || { echo "$name: skipped (no --websockets DIR)"; continue; }
      libs="$ws/src/?.lua;$ws/src/?/init.lua" ;;
    mqtt) [ -n "$mq" ] || { echo "$name: skipped (no --luamqtt DIR)"; continue; }
      command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { echo "$name: skipped (no mosquitto)"; continue; }
      libs="$mq/?.lua;$mq/?/init.lua" ;;
    *) echo "$0: no case $name" >&2; exit 2 ;;
  esac
  for impl in copas ours; do
    port=$((port + 1))
    if [ "$name" = mqtt ]; then
      PATH="$PATH:/usr/sbin" mosquitto -p "$port" >"$work/mosquitto.log" 2>&1 &
      mpid=$!
      i=0 # (until it listens)
      while [ $i -lt 50 ] && ! $lua -e "assert(require('socket').connect('127.0.0.1', $port))" 2>/dev/null; do
        sleep 0.1; i=$((i + 1))
      done
    fi
    if [ $impl = copas ]; then p="$copas_path"; else p="$ours_path"; fi
    start=$(date +%s%N)
    (cd "$work" && CC_PORT=$port LUA_PATH="$libs;$p;;" LUA_CPATH="$here/build/src/cpath/?.so;;" \
      timeout 60 $lua "$here/scripts/copas-clients/$name.lua") >"$work/$name.$impl" 2>&1
    echo "rc=$?" >>"$work/$name.$impl"
    end=$(date +%s%N)
    eval "t_$impl=$(( (end - start) / 1000000 ))"
    if [ -n "$mpid" ]; then kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null; mpid=; fi
  done
  if diff -u "$work/$name.copas" "$work/$name.ours" >"$work/$name.diff"; then
    echo "$name: same output on copas 4.11 (${t_copas} ms) and cosock-native (${t_ours} ms)"
  else
    fail=1
    echo "$name: DIFFERENT output (copas 4.11 < > cosock-native):"
    cat "$work/$name.diff"
  fi
done
exit $fail
