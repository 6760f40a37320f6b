/* compat53.h: the part of the Lua 5.3 C API this module uses that Lua 5.1,
 * 5.2 and LuaJIT lack or define otherwise, written here for them (nothing
 * on 5.3 and 5.4). Each name is a macro over a function of compat53.c with
 * the prefix cn_c53_ (the module exports only luaopen_*, so the names stay
 * ours) or over the version's own function; where LuaJIT has a function of
 * the same name, ours is used all the same, so 5.1 and LuaJIT behave alike.
 * Included by compat.h after lua.h and lauxlib.h; needs no other header
 * than those of the Lua it builds for (no lua-compat-5.3). */
#ifndef COSOCK_COMPAT53_H
#define COSOCK_COMPAT53_H

#include <lua.h>
#include <lauxlib.h>

#if LUA_VERSION_NUM < 503

#if LUA_VERSION_NUM == 501
#ifndef LUA_OK
#define LUA_OK 0
#endif

/* The stack index i as a positive one (pseudo-indices stay as they are). */
int cn_c53_absindex(lua_State *L, int i);
#define lua_absindex cn_c53_absindex

/* lua_tonumber and whether the value was a number (or a string that
 * converts to one): 5.1's lua_tonumber answers 0 for both. */
lua_Number cn_c53_tonumberx(lua_State *L, int i, int *isnum);
#define lua_tonumberx cn_c53_tonumberx

/* 5.1's lua_tointeger truncates 1.5 to 1; 5.3's says 0 (not an integer):
 * compat.h's lua_tointegerx decides. */
#define lua_tointeger(L, i) lua_tointegerx((L), (i), NULL)

#define lua_rawlen(L, i) lua_objlen((L), (i))

/* Copies the value at from into slot to; the stack keeps its size. */
void cn_c53_copy(lua_State *L, int from, int to);
#define lua_copy cn_c53_copy

/* t[p] = the value on top (popped), with p as a light userdata key. */
void cn_c53_rawsetp(lua_State *L, int t, const void *p);
#define lua_rawsetp cn_c53_rawsetp

/* Sets each l[i].func, as a closure over the nup values on top (popped at
 * the end), into the table below them under l[i].name. */
void cn_c53_setfuncs(lua_State *L, const luaL_Reg *l, int nup);
#define luaL_setfuncs cn_c53_setfuncs
#undef luaL_newlibtable                       /* (LuaJIT has one) */
#define luaL_newlibtable(L, l) lua_createtable((L), 0, (int)(sizeof(l) / sizeof((l)[0])) - 1)

/* Pushes msg (when not NULL), a newline and the traceback of co's stack
 * from level on, as 5.3's luaL_traceback and debug.traceback write it. */
void cn_c53_traceback(lua_State *L, lua_State *co, const char *msg, int level);
#define luaL_traceback cn_c53_traceback

/* 5.1's lua_resume has no "from". */
#define lua_resume(L, from, n) ((void)(from), lua_resume((L), (n)))
#endif /* 5.1 */

/* ---- 5.1 and 5.2 ---- */

/* Is the value a number with an integral value (there is no integer
 * subtype before 5.3) that a lua_Integer holds exactly? */
int cn_c53_isinteger(lua_State *L, int i);
#define lua_isinteger cn_c53_isinteger

/* Rotates the slots from i to the top by n places towards the top (n < 0:
 * towards i). */
void cn_c53_rotate(lua_State *L, int i, int n);
#define lua_rotate cn_c53_rotate

/* The 5.3 getters return the type of the value they push. */
#define lua_getfield(L, i, k) (lua_getfield((L), (i), (k)), lua_type((L), -1))
#define lua_gettable(L, i) (lua_gettable((L), (i)), lua_type((L), -1))
#define lua_rawget(L, i) (lua_rawget((L), (i)), lua_type((L), -1))
#define lua_rawgeti(L, i, n) (lua_rawgeti((L), (i), (n)), lua_type((L), -1))
int cn_c53_rawgetp(lua_State *L, int t, const void *p);
#define lua_rawgetp cn_c53_rawgetp

/* luaL_tolstring as 5.3 has it: __tostring, else the value, else the
 * metatable's __name (or the type) and the address. 5.2's does not read
 * __name. */
const char *cn_c53_tolstring(lua_State *L, int i, size_t *len);
#define luaL_tolstring cn_c53_tolstring

/* luaL_newmetatable also stores the name as __name (luaL_tolstring reads it). */
int cn_c53_newmetatable(lua_State *L, const char *name);
#define luaL_newmetatable(L, name) cn_c53_newmetatable((L), (name))

#endif /* LUA_VERSION_NUM < 503 */
#endif
