/* compat53: the functions of compat53.h (the 5.3 C API this module uses,
 * for Lua 5.1, 5.2 and LuaJIT); nothing on 5.3 and 5.4. Written for this
 * module: only what it calls, each as 5.3's manual describes it.
 * (Not through compat.h: its own context type must not reach this code.) */
#include "config.h"

#include "compat53.h"

#if LUA_VERSION_NUM < 503
#include <math.h>
#include <stdint.h>

#if LUA_VERSION_NUM == 501
int cn_c53_absindex(lua_State *L, int i) {
  return (i > 0 || i <= LUA_REGISTRYINDEX) ? i : lua_gettop(L) + i + 1;
}

lua_Number cn_c53_tonumberx(lua_State *L, int i, int *isnum) {
  lua_Number n = lua_tonumber(L, i);
  if (isnum != NULL) *isnum = n != 0 || lua_isnumber(L, i);
  return n;
}

void cn_c53_copy(lua_State *L, int from, int to) {
  to = cn_c53_absindex(L, to);                 /* (before the push moves the top) */
  lua_pushvalue(L, from);
  lua_replace(L, to);
}

void cn_c53_rawsetp(lua_State *L, int t, const void *p) {
  t = cn_c53_absindex(L, t);
  lua_pushlightuserdata(L, (void *)(uintptr_t)p);
  lua_insert(L, -2);                           /* key below the value */
  lua_rawset(L, t);
}

void cn_c53_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name != NULL; l++) {
    int i;
    for (i = 0; i < nup; i++) lua_pushvalue(L, -nup);   /* (each copy moves the next up) */
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

/* One line of a traceback for the function at ar, pushed. */
static void push_frame(lua_State *L, lua_Debug *ar) {
  if (ar->currentline > 0) lua_pushfstring(L, "\n\t%s:%d:", ar->short_src, ar->currentline);
  else lua_pushfstring(L, "\n\t%s:", ar->short_src);
  if (ar->namewhat != NULL && *ar->namewhat != '\0')
    lua_pushfstring(L, " in function '%s'", ar->name);
  else if (*ar->what == 'm')
    lua_pushliteral(L, " in main chunk");
  else if (*ar->what == 'C' || *ar->what == 't')
    lua_pushliteral(L, " in ?");
  else
    lua_pushfstring(L, " in function <%s:%d>", ar->short_src, ar->linedefined);
  lua_concat(L, 2);
}

/* The first FIRST frames and the last LAST, with "..." between when there
 * are more (as Lua's own traceback keeps a deep stack short). */
#define FIRST 10
#define LAST 11
void cn_c53_traceback(lua_State *L, lua_State *co, const char *msg, int level) {
  lua_Debug ar;
  int depth = level, parts = 0;
  luaL_checkstack(L, 4, NULL);
  while (lua_getstack(co, depth, &ar)) depth++;       /* one past the last frame */
  if (msg != NULL) {
    lua_pushstring(L, msg);
    lua_pushliteral(L, "\n");
    parts += 2;
  }
  lua_pushliteral(L, "stack traceback:");
  parts++;
  lua_concat(L, parts);
  for (; level < depth; level++) {
    if (level == FIRST && depth - level > LAST + 1) {
      lua_pushliteral(L, "\n\t...");
      lua_concat(L, 2);
      level = depth - LAST - 1;
      continue;
    }
    if (!lua_getstack(co, level, &ar) || !lua_getinfo(co, "Snl", &ar)) break;
    push_frame(L, &ar);
    lua_concat(L, 2);
  }
}
#endif /* 5.1 */

int cn_c53_isinteger(lua_State *L, int i) {
  lua_Number n;
  if (lua_type(L, i) != LUA_TNUMBER) return 0;
  n = lua_tonumber(L, i);
  /* (2^53: beyond it a double has no odd integers, and 5.1's lua_Integer,
   * a ptrdiff_t, may be 32 bits: what converts exactly is checked too) */
  return n == floor(n) && n >= -9007199254740992.0 && n <= 9007199254740992.0 &&
         (lua_Number)(lua_Integer)n == n;
}

/* Reverses the slots a..b. */
static void reverse(lua_State *L, int a, int b) {
  for (; a < b; a++, b--) {
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_replace(L, a);
    lua_replace(L, b);
  }
}

void cn_c53_rotate(lua_State *L, int i, int n) {
  int top = lua_gettop(L), cut;
  i = lua_absindex(L, i);
  cut = n >= 0 ? top - n : i - n - 1;          /* the last slot of the part that moves up */
  luaL_checkstack(L, 2, NULL);
  reverse(L, i, cut);
  reverse(L, cut + 1, top);
  reverse(L, i, top);
}

int cn_c53_rawgetp(lua_State *L, int t, const void *p) {
  t = lua_absindex(L, t);
  lua_pushlightuserdata(L, (void *)(uintptr_t)p);
  lua_rawget(L, t);                            /* (the macro: the type) */
  return lua_type(L, -1);
}

const char *cn_c53_tolstring(lua_State *L, int i, size_t *len) {
  i = lua_absindex(L, i);
  luaL_checkstack(L, 3, NULL);
  if (luaL_callmeta(L, i, "__tostring")) {
    if (!lua_isstring(L, -1)) luaL_error(L, "'__tostring' must return a string");
  } else {
    switch (lua_type(L, i)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      lua_pushvalue(L, i);
      break;
    case LUA_TBOOLEAN:
      lua_pushstring(L, lua_toboolean(L, i) ? "true" : "false");
      break;
    case LUA_TNIL:
      lua_pushliteral(L, "nil");
      break;
    default: {
      int has = luaL_getmetafield(L, i, "__name");   /* (pushed when there) */
      const char *kind = has && lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                               : luaL_typename(L, i);
      lua_pushfstring(L, "%s: %p", kind, lua_topointer(L, i));
      if (has) lua_remove(L, -2);
      break;
    }
    }
  }
  return lua_tolstring(L, -1, len);
}

int cn_c53_newmetatable(lua_State *L, const char *name) {
  if (!(luaL_newmetatable)(L, name)) return 0;
  lua_pushstring(L, name);
  lua_setfield(L, -2, "__name");
  return 1;
}
#else
typedef int cn_compat53_unused;                /* (ISO C: no empty file) */
#endif
