/* compat: every difference between the Lua C APIs this module builds against
 * (5.3 and 5.4), in one place, so the other files call one name whatever the
 * version. Each helper states what it does on each version.
 *
 * Lua 5.4 changed, for what this module uses:
 *  - lua_resume takes a fourth argument and reports the number of values the
 *    coroutine yielded or returned. After a yield from a C function (lua_yieldk)
 *    those values are only the top of the coroutine's stack: the function's
 *    own slots stay below them, for its continuation. 5.3 leaves the yielded
 *    values alone on the stack.
 *  - a coroutine can be closed (lua_resetthread, lua_closethread from 5.4.6),
 *    which runs its pending to-be-closed variables. 5.3 has nothing to close.
 * lua_newuserdata, lua_getuservalue and lua_setuservalue are macros over the
 * 5.4 "uservalue n" functions with n = 1, the same single value 5.3 has. */
#ifndef COSOCK_COMPAT_H
#define COSOCK_COMPAT_H

#include <lua.h>

#if LUA_VERSION_NUM < 503 || LUA_VERSION_NUM > 504
#error "cosock-native builds against Lua 5.3 or 5.4"
#endif

/* Resumes co with the nargs values on top of its stack. *nres gets the
 * number of values it yielded or returned: on LUA_YIELD the caller takes
 * those off the top (and no more) before resuming it again. */
static inline int cn_resume(lua_State *co, lua_State *from, int nargs, int *nres) {
#if LUA_VERSION_NUM >= 504
  return lua_resume(co, from, nargs, nres);
#else
  int status = lua_resume(co, from, nargs);
  *nres = lua_gettop(co);
  return status;
#endif
}

/* Closes a cancelled task's coroutine co, from L: runs its pending
 * to-be-closed variables, newest first, as coroutine.close does. Only a
 * suspended coroutine (yielded, or never started) is closed: one that is
 * running or has resumed another is left alone. Returns LUA_OK, or an error
 * status with the error value pushed on L (a __close that raised; the last
 * such error, as Lua's own closing keeps). Nothing happens on 5.3. */
static inline int cn_close_thread(lua_State *L, lua_State *co) {
#if LUA_VERSION_NUM >= 504
  lua_Debug ar;
  int status;
  if (co == L) return LUA_OK;
  if (lua_status(co) != LUA_YIELD &&
      (lua_status(co) != LUA_OK || lua_getstack(co, 0, &ar) > 0))
    return LUA_OK;
#if LUA_VERSION_RELEASE_NUM >= 50406
  status = lua_closethread(co, L);
#else
  status = lua_resetthread(co);
#endif
  if (status != LUA_OK) lua_xmove(co, L, 1);   /* the error value */
  lua_settop(co, 0);
  return status;
#else
  (void)L;
  (void)co;
  return LUA_OK;
#endif
}

#endif
