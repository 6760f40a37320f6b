/* current_task: core.current_task() -> the coroutine of the task the loop is
 * running now (also while it runs a coroutine whose yields the task forwards),
 * or nil outside any task; and the error of a wait made outside any task.
 *
 * cosock.op needs it twice: perform raises a clear error outside a task, and a
 * perform's own waker object tells the loop taking its wakers back before
 * resuming it (the current task is the performer) from a cancel (it is not).
 * The coroutine, not the handle: the loop holds handles weakly. */
#include "config.h"

#include <lauxlib.h>

#include "current_task.h"
#include "task.h"

int cn_current_task(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int slot = cn_current_slot(lp);
  cn_task *t = slot >= 0 ? cn_task_get(lp, slot) : NULL;
  if (t == NULL || t->co == NULL) {
    lua_pushnil(L);
    return 1;
  }
  cn_task_push_co(L, t);
  return 1;
}

/* A wait (a yield to the loop) made where L cannot yield. On the main thread
 * that is a wait outside any task: raises Lua's own words, then what to do
 * instead. Elsewhere (inside a C call that cannot be yielded across) returns
 * 0, and the yield that follows fails with Lua's own error. */
int cn_wait_outside_task(lua_State *L) {
  int main = lua_pushthread(L);
  lua_pop(L, 1);
  if (main)
    return luaL_error(L, "attempt to yield from outside a coroutine (a cosock wait must run in a "
                         "task: call it from a function given to cosock.spawn, then cosock.run())");
  return 0;
}
