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

void cn_wakers_open(lua_State *L) {
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushcclosure(L, l_waker_stale, 1);
  lua_setfield(L, -2, "waker_stale");
}
