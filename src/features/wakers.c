/* wakers: lets an object that keeps many wakers at once (cosock.signal's
 * waiter lists) tell a waker whose wait is over from one that would still
 * wake its task. Calling a stale waker does nothing, so without asking, such
 * an object would count a waiter that timed out (its task not yet resumed)
 * or that a reset forgot, and a signal meant for one waiter would be lost. */
#include "config.h"

#include <lauxlib.h>

#include "park.h"
#include "wakers.h"

/* waker_stale(fn) -> true when fn is one of this loop's wakers and its wait
 * is over (timed out, ended, cancelled, reset, or fn already ran); false for
 * a waker that would still wake its task, and for any other value. */
static int l_waker_stale(lua_State *L) {
  lua_pushboolean(L, cn_waker_stale(L, cn_loop_get(L), 1));
  return 1;
}

void cn_anchored_set(lua_State *L, int anchor, const void *key, int ud, int fn) {
  ud = lua_absindex(L, ud);
  fn = lua_absindex(L, fn);
  cn_push_ref(L, anchor);
  lua_pushvalue(L, ud);
  lua_rawsetp(L, -2, key);                     /* (may raise: nothing changed) */
  lua_pop(L, 1);
  lua_pushvalue(L, fn);
  cn_setuservalue(L, ud);
}

void cn_anchored_drop(lua_State *L, int anchor, const void *key, int ud) {
  ud = lua_absindex(L, ud);
  lua_pushnil(L);
  cn_setuservalue(L, ud);
  cn_push_ref(L, anchor);
  lua_pushnil(L);
  lua_rawsetp(L, -2, key);                     /* (an existing key: no allocation) */
  lua_pop(L, 1);
}

void cn_anchored_clear(lua_State *L, int anchor, void (*forget)(void *key)) {
  cn_push_ref(L, anchor);
  lua_pushnil(L);
  while (lua_next(L, -2)) {                    /* anchor, key, object */
    void *key = lua_touserdata(L, -2);
    if (key != NULL) forget(key);
    lua_pushnil(L);
    cn_setuservalue(L, -2);
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, -4);                         /* (clearing a field during next is allowed) */
  }
  lua_pop(L, 1);
}

void cn_wakers_open(lua_State *L) {
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushcclosure(L, l_waker_stale, 1);
  lua_setfield(L, -2, "waker_stale");
}
