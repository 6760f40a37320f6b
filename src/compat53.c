/* compat53: lua-compat-5.3's functions, compiled once for Lua 5.1, 5.2 and
 * LuaJIT (compat.h declares them under the prefix cn_compat53); nothing on
 * 5.3 and 5.4. The module exports only luaopen_*, so the names stay ours.
 * (Not through compat.h: its own context type must not reach this code.) */
#include "config.h"

#include <lua.h>

#if LUA_VERSION_NUM < 503
#define COMPAT53_PREFIX cn_compat53
#include <compat-5.3.h>
#include <compat-5.3.c>
#else
typedef int cn_compat53_unused;                /* (ISO C: no empty file) */
#endif
