#!/bin/sh
# copas-tests.sh --copas DIR [--timerwheel DIR] [--lua LUA] [--installed] [--only NAME]...
#
# Runs copas 4.11's own tests/ (from the checkout DIR, copied to a temporary
# directory: nothing of copas comes into this repository), unchanged, twice
# side by side: on copas 4.11 itself (DIR/src, with binaryheap, coxpcall and
# timerwheel) and on cosock-native's copas API (lua/copas-compat first on
# LUA_PATH, lua/ and the build tree's cpath; with --installed, the
# cosock-native installed on this system, selected by `lua -l
# cosock.copas.install`). Prints per test: copas's result, ours.
# doc/copas.md explains every difference.
#
# copas 4.11 needs timerwheel (not in Debian): --timerwheel DIR names a
# checkout of Tieske/timerwheel.lua (default: DIR/../timerwheel); binaryheap
# and coxpcall come from Debian (lua-binaryheap, lua-coxpcall; no Lua 5.4
# build there, so run copas itself on 5.1, 5.3 or LuaJIT).
#
# The tests that reach the internet run against local servers, the same way
# for both: request.lua against servers this script starts (python3's
# http.server; openssl s_server for https); connecttwice.lua and
# httpredirect.lua, which name internet hosts, in a network and mount
# namespace of their own whose /etc/hosts names those hosts 127.0.0.1,
# served by scripts/copas-tests/fake-internet.lua (scripts/copas-tests/
# offline.sh; needs root for unshare -mn, else they are listed as skipped).
# The tests on port 49500 run in such a namespace too (when root).
# Runtime: about 4 minutes (largetransfer and starve move 50 MB, starve runs
# 30 s, http-timeout waits out 4 timeouts of 5 s), most of it copas's own.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
copas=
tw=
lua=lua5.3
only=
installed=
while [ $# -gt 0 ]; do
  case "$1" in
    --copas) copas=$2; shift 2 ;;
    --timerwheel) tw=$2; shift 2 ;;
    --lua) lua=$2; shift 2 ;;
    --only) only="$only $2"; shift 2 ;;
    --installed) installed=yes; shift ;;
    *) echo "usage: $0 --copas DIR [--timerwheel DIR] [--lua LUA] [--installed] [--only NAME]..." >&2; exit 2 ;;
  esac
done
[ -n "$copas" ] && [ -f "$copas/src/copas.lua" ] || { echo "$0: --copas DIR: a copas checkout (with src/copas.lua)" >&2; exit 2; }
copas=$(cd "$copas" && pwd)
[ -n "$tw" ] || tw="$copas/../timerwheel"
case "$lua" in
  5.1) lua=lua5.1 ;; 5.3) lua=lua5.3 ;; 5.4) lua=lua5.4 ;; jit) lua=luajit ;;
esac
case "$lua" in
  lua5.1) build=build-lua5.1 ;; lua5.4) build=build-lua5.4 ;; luajit) build=build-luajit ;; *) build=build ;;
esac
[ -n "$installed" ] || [ -f "$here/$build/src/cpath/cosock/core.so" ] || { echo "$0: build $build first (scripts/build.sh or scripts/test.sh --lua ...)" >&2; exit 2; }

work=$(mktemp -d /tmp/copas-tests.XXXXXX)
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT INT TERM

cp -r "$copas/tests" "$work/tests"
# the tests' certificates (copas's Makefile: make certs)
(cd "$work/tests/certs" && for s in rootA rootB serverA serverB clientA clientB; do sh ./$s.sh; done) >"$work/certs.log" 2>&1 \
  || { echo "$0: could not make the test certificates (see openssl)" >&2; cat "$work/certs.log" >&2; exit 1; }

# local servers for request.lua
port_http=$((21000 + $$ % 10000)) # (below the ephemeral range)
port_https=$((port_http + 1))
mkdir -p "$work/www" && echo "<html>hello from the copas-tests server</html>" > "$work/www/index.html"
(cd "$work/www" && exec python3 -m http.server "$port_http" --bind 127.0.0.1) >/dev/null 2>&1 &
pids="$pids $!"
(cd "$work/tests/certs" && exec openssl s_server -quiet -www -accept "$port_https" \
   -cert serverA.pem -key serverAkey.pem -CAfile rootA.pem) >/dev/null 2>&1 &
pids="$pids $!"
sleep 1

ver=$($lua -e 'io.write((_VERSION:gsub("Lua ", "")))')
sys="/usr/share/lua/$ver/?.lua;/usr/share/lua/$ver/?/init.lua;/usr/local/share/lua/$ver/?.lua"
copas_path="$copas/src/?.lua;$tw/src/?.lua;$tw/src/?/init.lua;$sys;;"
ours_path="$here/lua/copas-compat/?.lua;$here/lua/?.lua;$here/lua/?/init.lua;$sys;;"
ours_cpath="$here/$build/src/cpath/?.so;;"
ours_lua=$lua
cosock_path="$here/lua/?.lua;$here/lua/?/init.lua;$sys;;"
if [ -n "$installed" ]; then
  ours_path=";;" ours_cpath=";;" cosock_path=";;" ours_lua="$lua -l cosock.copas.install"
  $ours_lua -e 'assert(require("copas")._VERSION:find("cosock"))' 2>/dev/null \
    || { echo "$0: --installed: no cosock-native installed for $lua" >&2; exit 2; }
fi

# name | arguments | (why skipped)
tests="cancelall close errhandlers exit exittest future http-timeout largetransfer lock
loop_starter no_luasocket pause queue removeserver removethread
request:http://127.0.0.1:$port_http/ request:https://127.0.0.1:$port_https/
semaphore starve tcptimeout timer timeout_errors tls-sni udptimeout
connecttwice httpredirect"
# Run in a network namespace of their own (scripts/copas-tests/offline.sh):
# the two that name internet hosts, and the three that bind port 49500, in
# the system's ephemeral range, where on a shared machine another program's
# connection may hold it.
offline="connecttwice httpredirect http-timeout largetransfer starve"
can_ns=yes
[ "$(id -u)" = 0 ] && command -v unshare >/dev/null || can_ns=no
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || can_ns=no
if [ $can_ns = no ]; then
  offline=""
  skip_connecttwice="connects to google.com and thijsschreijer.nl (needs root for a namespace of its own)"
  skip_httpredirect="follows redirects of goo.gl and bit.ly (needs root for a namespace of its own)"
fi

run() { # run <which> <test> <arg>
  name=$2 arg=$3
  case " $offline " in *" $name "*)
    if [ "$1" = copas ]; then lp="$copas_path" lcp=";;" l=$lua; else lp="$ours_path" lcp="$ours_cpath" l=$ours_lua; fi
    PATH="$PATH:/usr/sbin" "$here/scripts/copas-tests/offline.sh" "$work" "$l" "$name" "$lp" "$lcp" \
      "$cosock_path" "$ours_cpath" >"$work/$1-$name.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then echo pass; elif [ $rc -eq 97 ]; then echo "skipped"; else echo "FAIL($rc)"; fi
    return
  esac
  if [ "$1" = copas ]; then
    (cd "$work" && LUA_PATH="$copas_path" timeout 150 $lua "tests/$name.lua" $arg) >"$work/$1-$name.log" 2>&1
  else
    (cd "$work" && LUA_PATH="$ours_path" LUA_CPATH="$ours_cpath" timeout 150 $ours_lua "tests/$name.lua" $arg) >"$work/$1-$name.log" 2>&1
  fi
  rc=$?
  if [ $rc -eq 0 ]; then echo pass; elif [ $rc -eq 124 ]; then echo "FAIL(hang)"; else echo "FAIL($rc)"; fi
}

printf '%-42s %-12s %-12s %s\n' "test ($lua)" copas-4.11 cosock-native ""
pass_c=0 pass_o=0 fail_c=0 fail_o=0 regress=0
for t in $tests; do
  name=${t%%:*}; arg=
  [ "$name" != "$t" ] && arg=${t#*:}
  if [ -n "$only" ]; then case " $only " in *" $name "*) ;; *) continue ;; esac; fi
  eval "why=\${skip_$(echo "$name" | tr '-' '_'):-}"
  if [ -n "$why" ]; then
    printf '%-42s %-12s %-12s %s\n' "$name" skipped skipped "$why"
    continue
  fi
  rc=$(run copas "$name" "$arg"); ro=$(run ours "$name" "$arg")
  label="$name${arg:+ $arg}"
  if [ "$rc" = skipped ] || [ "$ro" = skipped ]; then
    printf '%-42s %-12s %-12s %s\n' "$label" "$rc" "$ro" "(no namespace could be made)"
    continue
  fi
  note=
  [ "$rc" = pass ] && pass_c=$((pass_c + 1)) || fail_c=$((fail_c + 1))
  [ "$ro" = pass ] && pass_o=$((pass_o + 1)) || fail_o=$((fail_o + 1))
  if [ "$rc" = pass ] && [ "$ro" != pass ]; then
    regress=$((regress + 1)); note="<-- passes on copas only"
    tail -n 15 "$work/ours-$name.log" | sed 's/^/    | /'
  fi
  printf '%-42s %-12s %-12s %s\n' "$label" "$rc" "$ro" "$note"
done
echo "copas-4.11: $pass_c passed, $fail_c failed; cosock-native: $pass_o passed, $fail_o failed; passing on copas only: $regress"
[ $regress -eq 0 ]
