#!/bin/sh
# offline.sh WORK LUA TEST LUA_PATH LUA_CPATH COSOCK_PATH COSOCK_CPATH
# Runs copas's tests/TEST.lua (in WORK) with the internet it expects played
# on 127.0.0.1: in a network namespace of its own (only lo) and a mount
# namespace where /etc/hosts names the hosts the test reaches 127.0.0.1,
# with fake-internet.lua (run on cosock-native: COSOCK_PATH, COSOCK_CPATH)
# serving them. Needs root (unshare -mn). Exit status: the test's, or 97
# when the namespace could not be made. Called by scripts/copas-tests.sh.
set -u
work=$1 lua=$2 test=$3 lpath=$4 lcpath=$5 cpath=$6 ccpath=$7
here=$(cd "$(dirname "$0")" && pwd)
printf '127.0.0.1 localhost google.com thijsschreijer.nl goo.gl github.com bit.ly www.httpvshttps.com\n' >"$work/hosts"
exec unshare -mn sh -c '
  work=$1 lua=$2 test=$3 lpath=$4 lcpath=$5 cpath=$6 ccpath=$7 here=$8
  ip link set lo up 2>/dev/null || exit 97
  mount --bind "$work/hosts" /etc/hosts 2>/dev/null || exit 97
  LUA_PATH="$cpath" LUA_CPATH="$ccpath" $lua "$here/fake-internet.lua" \
    "$work/tests/certs/serverA.pem" "$work/tests/certs/serverAkey.pem" >"$work/fake-internet.log" 2>&1 &
  fake=$!
  i=0
  while [ $i -lt 50 ] && ! grep -q ready "$work/fake-internet.log"; do sleep 0.1; i=$((i + 1)); done
  cd "$work" && LUA_PATH="$lpath" LUA_CPATH="$lcpath" timeout 150 $lua "tests/$test.lua"
  rc=$?
  kill $fake 2>/dev/null
  exit $rc
' sh "$work" "$lua" "$test" "$lpath" "$lcpath" "$cpath" "$ccpath" "$here"
