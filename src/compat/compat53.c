/* compat53: lua-compat-5.3's functions, compiled once for Lua 5.1, 5.2 and
 * LuaJIT (compat.h declares them under the prefix cn_compat53); nothing on
 * 5.3 and 5.4. The module exports only luaopen_*, so the names stay ours.
 * (Not through compat.h: its own context type must not reach this code.) */
#include "config.h"

#include <lua.h>

#if LUA_VERSION_NUM < 503
/* The first file of the build that needs lua-compat-5.3: say what to install
 * before the compiler's bare "No such file or directory". */
#if defined(__has_include)
#if !__has_include(<compat-5.3.h>)
#error "compat-5.3.h not found: Lua 5.1, 5.2 and LuaJIT need lua-compat-5.3's compat-5.3.h and compat-5.3.c in the Lua include directory (Debian: apt-get install lua-compat53-dev; it puts them in /usr/include/lua5.1 and /usr/include/lua5.2, so for LuaJIT also add -idirafter /usr/include/lua5.1 to CFLAGS)"
#endif
#endif
#define COMPAT53_PREFIX cn_compat53
#include <compat-5.3.h>
#include <compat-5.3.c>
#else
typedef int cn_compat53_unused;                /* (ISO C: no empty file) */
#endif
