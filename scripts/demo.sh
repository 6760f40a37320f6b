#!/bin/sh
# Installs what is missing, builds cosock-native and runs examples/demo.lua
# against the build tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" build
exec "$top/scripts/run-example.sh" "${1:-demo}"
