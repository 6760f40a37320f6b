#!/bin/sh
# Checks the rocks. Both rockspecs (rockspecs/cosock-native-scm-1.rockspec
# for development, cosock-native-VERSION-1.rockspec for the release) list
# every C source under src/ and every Lua module of lua-modules.am, and
# define configure.ac's version. Then:
#  - by default, `luarocks make` of the scm rockspec builds from a copy of the
#    checkout into a fresh tree with the README's command;
#  - with --release, the release rockspec is built from a local copy of the
#    release tarball (make dist in a clean copy of the checkout, or
#    --tarball FILE) with only its source.url changed to that copy, as the
#    publisher's `luarocks build`/`pack` would, against a plain Lua include
#    directory (lua.h, luaconf.h, lualib.h, lauxlib.h and nothing else,
#    copied outside the tree); `luarocks pack` makes the .src.rock, which is
#    built again into a second tree, as `luarocks install` does; the
#    installed files are checked (the modules and nothing else as Lua
#    modules, the docs and examples beside the rock).
# The demo then runs against the tree. Nothing is fetched: LuaSocket is
# Debian's lua-socket (--deps-mode none) and the only rocks server is an
# empty directory.
#   scripts/check-rock.sh [--lua X.Y|jit] [--release [--tarball FILE] [--out DIR]]
#     --lua     5.1 to 5.4, or jit (LuaJIT: the 5.1 rock, its own headers);
#               default $LUA_VERSION, else 5.3
#     --out DIR keeps the release's .src.rock and the tarball in DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
version=${LUA_VERSION:-5.3}
release=no tarball= out=
usage() { echo "usage: scripts/check-rock.sh [--lua X.Y|jit] [--release [--tarball FILE] [--out DIR]]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--lua) [ $# -ge 2 ] || usage; version=$2; shift ;;
	--release) release=yes ;;
	--tarball) [ $# -ge 2 ] || usage; tarball=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift ;;
	*) usage ;;
	esac
	shift
done
"$top/scripts/install-deps.sh" --lua "$version" --rock
lua=lua$version incdir=/usr/include/lua$version
if [ "$version" = jit ]; then
	lua=luajit incdir=/usr/include/luajit-2.1 version=5.1
fi
pkgver=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Each rockspec's lists against the tree. It is data: load it into a table.
cd "$top"
check_lists() {
rockspec=$1
find src -name '*.c' | sort > "$tmp/c-tree"
sed -n 's|^[[:space:]]*\(lua/[^[:space:]]*\.lua\).*|\1|p' lua-modules.am | sort > "$tmp/lua-tree"
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
diff -u "$tmp/lua-tree" "$tmp/lua-spec" || { echo "check-rock: the Lua modules differ (-lua-modules.am +$rockspec)" >&2; ok=0; }
diff -u "$tmp/c-tree" "$tmp/c-spec-linux" || { echo "check-rock: the Linux C sources differ (-src/ +$rockspec)" >&2; ok=0; }
diff -u "$tmp/c-tree-posix" "$tmp/c-spec-posix" || { echo "check-rock: the C sources without epoll differ (-src/ +$rockspec)" >&2; ok=0; }
[ "$ok" = 1 ] || exit 1
# The version the rock defines is the package's.
grep -q "PACKAGE_VERSION=\"$pkgver\"" "$rockspec" ||
	{ echo "check-rock: $rockspec does not define PACKAGE_VERSION=\"$pkgver\" (configure.ac's version)" >&2; exit 1; }
}
check_lists rockspecs/cosock-native-scm-1.rockspec
check_lists "rockspecs/cosock-native-$pkgver-1.rockspec"
echo "check-rock: both rockspecs list src/ and lua-modules.am and define $pkgver"

mkdir "$tmp/noserver"
if [ "$release" = no ]; then
# 2. luarocks make, from a copy (the build leaves objects where it runs),
# with the README's command ("With luarocks"): --deps-mode none, as LuaSocket
# is Debian's lua-socket, which luarocks cannot see. --only-server: nothing is
# fetched.
rockspec=rockspecs/cosock-native-scm-1.rockspec
mkdir "$tmp/checkout"
tar -C "$top" -cf - src lua bin rockspecs noconfigure LICENSE README.md | tar -C "$tmp/checkout" -xf -
echo "check-rock: luarocks make for Lua $version into $tmp/tree"
(cd "$tmp/checkout" &&
	luarocks --lua-version "$version" make --deps-mode none --tree "$tmp/tree" \
		--only-server="$tmp/noserver" "$rockspec") > "$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log" >&2; echo "check-rock: luarocks make failed" >&2; exit 1; }
luarocks --lua-version "$version" --tree "$tmp/tree" list
# The build says it is without c-ares (nothing else would tell).
grep -q "built without c-ares" "$tmp/make.log" ||
	{ cat "$tmp/make.log" >&2; echo "check-rock: the build did not say it is without c-ares" >&2; exit 1; }
else
# 2. The release: the tarball, a copy of the rockspec pointing at it.
rockspec=rockspecs/cosock-native-$pkgver-1.rockspec
if [ -z "$tarball" ]; then
	mkdir "$tmp/checkout" "$tmp/nopandoc"
	(cd "$top" && git ls-files -z | tar --null -T - -cf -) | tar -C "$tmp/checkout" -xf -
	echo "check-rock: make dist of cosock-native $pkgver (log in $tmp/dist.log)"
	(cd "$tmp/checkout" && ./bootstrap && ./configure -q LUA=lua5.3 &&
		make -s dist PANDOC="$tmp/nopandoc/pandoc") > "$tmp/dist.log" 2>&1 ||
		{ tail -n 40 "$tmp/dist.log" >&2; echo "check-rock: make dist failed" >&2; exit 1; }
	tarball=$tmp/checkout/cosock-native-$pkgver.tar.gz
fi
mkdir "$tmp/pub"
cp "$tarball" "$tmp/pub/cosock-native-$pkgver.tar.gz"
sed "s|^  url = \".*\",\$|  url = \"file://$tmp/pub/cosock-native-$pkgver.tar.gz\",|" "$rockspec" \
	> "$tmp/pub/cosock-native-$pkgver-1.rockspec"
grep -q "url = \"file://$tmp/pub/" "$tmp/pub/cosock-native-$pkgver-1.rockspec" ||
	{ echo "check-rock: could not set source.url in a copy of $rockspec" >&2; exit 1; }
# A plain include directory: the four headers a Lua installation has and
# nothing else (no compat-5.3.h), outside the tree.
mkdir "$tmp/include"
for h in lua.h luaconf.h lualib.h lauxlib.h; do cp "$incdir/$h" "$tmp/include/"; done
[ "$lua" = luajit ] && cp "$incdir/luajit.h" "$tmp/include/"
luarocks --lua-version "$version" lint "$tmp/pub/cosock-native-$pkgver-1.rockspec"
echo "check-rock: luarocks build of the release rockspec for $lua (LUA_INCDIR with only $(ls "$tmp/include" | tr '\n' ' '))"
(cd "$tmp/pub" && luarocks --lua-version "$version" build --deps-mode none --tree "$tmp/tree0" \
	--only-server="$tmp/noserver" "cosock-native-$pkgver-1.rockspec" LUA_INCDIR="$tmp/include") \
	> "$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log" >&2; echo "check-rock: luarocks build failed" >&2; exit 1; }
grep -q "built without c-ares" "$tmp/build.log" ||
	{ cat "$tmp/build.log" >&2; echo "check-rock: the build did not say it is without c-ares" >&2; exit 1; }
grep -q -- "-I$tmp/include" "$tmp/build.log" ||
	{ cat "$tmp/build.log" >&2; echo "check-rock: the build did not use the plain include directory" >&2; exit 1; }
# luarocks pack: the .src.rock luarocks.org serves; built again from it
# into a fresh tree, as `luarocks install cosock-native` does.
(cd "$tmp/pub" && luarocks --lua-version "$version" pack "cosock-native-$pkgver-1.rockspec") > "$tmp/pack.log" 2>&1 ||
	{ cat "$tmp/pack.log" >&2; echo "check-rock: luarocks pack failed" >&2; exit 1; }
srcrock=$tmp/pub/cosock-native-$pkgver-1.src.rock
[ -f "$srcrock" ] || { cat "$tmp/pack.log" >&2; echo "check-rock: no $srcrock" >&2; exit 1; }
echo "check-rock: luarocks pack made $(basename "$srcrock") ($(wc -c < "$srcrock") bytes); building it into $tmp/tree"
(cd "$tmp" && luarocks --lua-version "$version" build --deps-mode none --tree "$tmp/tree" \
	--only-server="$tmp/noserver" "$srcrock" LUA_INCDIR="$tmp/include") > "$tmp/build2.log" 2>&1 ||
	{ cat "$tmp/build2.log" >&2; echo "check-rock: luarocks build of the .src.rock failed" >&2; exit 1; }
luarocks --lua-version "$version" --tree "$tmp/tree" list
# What it installed: as Lua modules exactly lua-modules.am's (nothing else
# from lua/), the C module, and the docs and examples beside the rock.
(cd "$tmp/tree/share/lua/$version" && find . -type f | sed 's|^\./|lua/|' | sort) > "$tmp/installed-lua"
if ! diff -u "$tmp/lua-tree" "$tmp/installed-lua"; then
	echo "check-rock: the rock installs other Lua files than lua-modules.am's modules (-expected +installed)" >&2
	exit 1
fi
[ -f "$tmp/tree/lib/lua/$version/cosock/core.so" ] ||
	{ echo "check-rock: no cosock/core.so in the tree" >&2; exit 1; }
rockdir=$tmp/tree/lib/luarocks/rocks-$version/cosock-native/$pkgver-1
for f in doc/getting-started.md doc/reference.md doc/site/template.html examples/demo.lua; do
	[ -f "$rockdir/$f" ] || { ls -R "$rockdir" >&2; echo "check-rock: $f is not installed with the rock" >&2; exit 1; }
done
if [ -n "$out" ]; then
	mkdir -p "$out"
	cp "$srcrock" "$tarball" "$out/"
	echo "check-rock: kept $(basename "$srcrock") and $(basename "$tarball") in $out"
fi
fi

# 3. The demo against the tree (and the system's LuaSocket), with the tree
# first on the paths: `luarocks path` alone puts /usr/local ahead of it, where
# a `make install` may have left another cosock-native (doc/install.md).
LUA_PATH="$(luarocks --lua-version "$version" --tree "$tmp/tree" path --lr-path);;"
LUA_CPATH="$(luarocks --lua-version "$version" --tree "$tmp/tree" path --lr-cpath);;"
export LUA_PATH LUA_CPATH
"$top/scripts/demo-installed.sh" "$lua" "$tmp/tree"
# The command cosock-trace, through luarocks' wrapper: the summary of a
# generated trace.
"$lua" "$top/spec/support/trace_gen.lua" small "$tmp/small.trace"
"$tmp/tree/bin/cosock-trace" "$tmp/small.trace" --no-html | grep -q '#2 client -send-> #3 worker -close-> #1 server' ||
	{ "$tmp/tree/bin/cosock-trace" "$tmp/small.trace" --no-html; echo "check-rock: cosock-trace does not run from the tree" >&2; exit 1; }
echo "check-rock: cosock-trace runs from the tree"
if [ "$release" = yes ]; then
	echo "check-rock: the release rock builds from the tarball against plain headers, packs, installs only modules and runs on $lua"
else
	echo "check-rock: the rock builds and runs on Lua $version"
fi
