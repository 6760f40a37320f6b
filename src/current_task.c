/* current_task: core.current_task() -> the coroutine of the task the loop is
 * running now (also while it runs a coroutine whose yields the task forwards),
 * or nil outside any task.
 *
 * cosock.op needs it twice: perform raises a clear error outside a task, and a
 * perform's own waker object tells the loop taking its wakers back before
 * resuming it (the current task is the performer) from a cancel (it is not).
 * The coroutine, not the handle: the loop holds handles weakly. */
#include "config.h"

#include <lauxlib.h>

#include "current_task.h"
#include "run.h"
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
