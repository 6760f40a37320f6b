#!/bin/sh
# Checks the rock: rockspecs/cosock-native-scm-1.rockspec lists every C source
# under src/ and every Lua module of lua/modules.am, `luarocks make` builds it
# from a copy of the checkout into a fresh tree with the README's command, and
# the demo runs against that tree. Nothing is fetched: LuaSocket is Debian's
# lua-socket (--deps-mode none) and the only rocks server is an empty directory.
#   scripts/check-rock.sh [--lua X.Y]     (5.1 to 5.4; default $LUA_VERSION, else 5.3)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=${LUA_VERSION:-5.3}
case "${1:-}" in
--lua) version=${2:?--lua needs a version} ;;
"") ;;
*) echo "usage: scripts/check-rock.sh [--lua X.Y]" >&2; exit 2 ;;
esac
"$top/scripts/install-deps.sh" --lua "$version" --rock
lua=lua$version
rockspec=rockspecs/cosock-native-scm-1.rockspec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The rockspec's lists against the tree. It is data: load it into a table.
cd "$top"
find src -name '*.c' | sort > "$tmp/c-tree"
sed -n 's|^[[:space:]]*\(lua/[^[:space:]]*\.lua\).*|\1|p' lua/modules.am | sort > "$tmp/lua-tree"
"$lua" - "$rockspec" "$tmp" <<'LUA'
local file, tmp = ...
local spec = {}
local chunk
if setfenv then -- 5.1, LuaJIT
  chunk = assert(loadfile(file))
  setfenv(chunk, spec)
else
  chunk = assert(loadfile(file, "t", spec))
end
chunk()
local function write(name, list)
  table.sort(list)
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(table.concat(list, "\n"), #list > 0 and "\n" or "")
  f:close()
end
local luamods, posix = {}, {}
for name, m in pairs(spec.build.modules) do
  if type(m) == "string" then
    luamods[#luamods + 1] = m
    assert(m == "lua/" .. name:gsub("%.", "/") .. ".lua", name .. " is not in its lua/ file")
  end
end
for _, f in ipairs(spec.build.modules["cosock.core"].sources) do posix[#posix + 1] = f end
local linux = {}
for _, f in ipairs(spec.build.platforms.linux.modules["cosock.core"].sources) do linux[#linux + 1] = f end
write("lua-spec", luamods)
write("c-spec-linux", linux)
write("c-spec-posix", posix)
LUA
grep -v '/poller_epoll\.c$' "$tmp/c-tree" > "$tmp/c-tree-posix"
ok=1
diff -u "$tmp/lua-tree" "$tmp/lua-spec" || { echo "check-rock: the Lua modules differ (-lua/modules.am +$rockspec)" >&2; ok=0; }
diff -u "$tmp/c-tree" "$tmp/c-spec-linux" || { echo "check-rock: the Linux C sources differ (-src/ +$rockspec)" >&2; ok=0; }
diff -u "$tmp/c-tree-posix" "$tmp/c-spec-posix" || { echo "check-rock: the C sources without epoll differ (-src/ +$rockspec)" >&2; ok=0; }
[ "$ok" = 1 ] || exit 1
# The version the rock defines is the package's.
pkgver=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' configure.ac)
grep -q "PACKAGE_VERSION=\"$pkgver\"" "$rockspec" ||
	{ echo "check-rock: $rockspec does not define PACKAGE_VERSION=\"$pkgver\" (configure.ac's version)" >&2; exit 1; }

# 2. luarocks make, from a copy (the build leaves objects where it runs),
# with the README's command ("With luarocks"): --deps-mode none, as LuaSocket
# is Debian's lua-socket, which luarocks cannot see. --only-server: nothing is
# fetched.
mkdir "$tmp/checkout" "$tmp/noserver"
tar -C "$top" -cf - src lua rockspecs noconfigure LICENSE README.md | tar -C "$tmp/checkout" -xf -
echo "check-rock: luarocks make for Lua $version into $tmp/tree"
(cd "$tmp/checkout" &&
	luarocks --lua-version "$version" make --deps-mode none --tree "$tmp/tree" \
		--only-server="$tmp/noserver" "$rockspec") > "$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log" >&2; echo "check-rock: luarocks make failed" >&2; exit 1; }
luarocks --lua-version "$version" --tree "$tmp/tree" list
# The build says it is without c-ares (nothing else would tell).
grep -q "built without c-ares" "$tmp/make.log" ||
	{ cat "$tmp/make.log" >&2; echo "check-rock: the build did not say it is without c-ares" >&2; exit 1; }

# 3. The demo against the tree (and the system's LuaSocket), with the tree
# first on the paths: `luarocks path` alone puts /usr/local ahead of it, where
# a `make install` may have left another cosock-native (doc/install.md).
LUA_PATH="$(luarocks --lua-version "$version" --tree "$tmp/tree" path --lr-path);;"
LUA_CPATH="$(luarocks --lua-version "$version" --tree "$tmp/tree" path --lr-cpath);;"
export LUA_PATH LUA_CPATH
"$top/scripts/demo-installed.sh" "$lua" "$tmp/tree"
echo "check-rock: the rock builds and runs on Lua $version"
