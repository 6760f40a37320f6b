#!/bin/sh
# Runs examples/demo.lua against an installed cosock-native, not the checkout:
# checks that cosock and cosock.core load from under PREFIX, then that the
# demo gets every answer right. For scripts/check-rock.sh and build-deb.sh.
#   scripts/demo-installed.sh LUA PREFIX     (LUA_PATH/LUA_CPATH as needed)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
lua=${1:?usage: scripts/demo-installed.sh LUA PREFIX}
prefix=${2:?usage: scripts/demo-installed.sh LUA PREFIX}
# From a directory of its own, so nothing is found through ./?.lua.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$lua" - "$prefix" <<'LUA'
local prefix = ...
-- package.searchpath is 5.2+; the same search by hand on 5.1 and LuaJIT.
local searchpath = package.searchpath or function(name, path)
  local fname = name:gsub("%.", "/")
  for templ in path:gmatch("[^;]+") do
    local file = templ:gsub("%?", fname)
    local f = io.open(file, "r")
    if f then f:close() return file end
  end
  return nil
end
for _, m in ipairs({ { "cosock", package.path }, { "cosock.core", package.cpath } }) do
  local file = searchpath(m[1], m[2])
  print(("demo-installed: %s from %s"):format(m[1], tostring(file)))
  if not file or file:sub(1, #prefix) ~= prefix then
    io.stderr:write(("demo-installed: %s is not loaded from under %s\n"):format(m[1], prefix))
    os.exit(1)
  end
end
print("demo-installed: cosock-native " .. require("cosock")._NATIVE_VERSION .. " on " .. _VERSION)
LUA
"$lua" "$top/examples/demo.lua" > demo.out 2>&1 || { cat demo.out; echo "demo-installed: the demo failed" >&2; exit 1; }
cat demo.out
grep -q '^5 clients, 15 of 15 answers correct$' demo.out && grep -q 'run() returned$' demo.out || {
	echo "demo-installed: the demo did not get every answer" >&2
	exit 1
}
