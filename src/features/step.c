/* step: the run loop one pass at a time, for a program whose thread belongs
 * to another loop (a host's event loop, a GUI, a test). cosock.step runs the
 * pass run runs (run.c, cn_run_step), bounded by the caller's timeout, and
 * never raises the stall: code outside the loop may still wake the tasks.
 * cosock.next_timeout says when the next pass is due. doc/embedding.md. */
#include "config.h"

#include <math.h>

#include <lauxlib.h>

#include "embed.h"
#include "hooks.h"
#include "run.h"
#include "step.h"
#include "task.h"
#include "waiters.h"
#include "messages.h"

/* step([timeout]) -> tasks remain, descriptors. One pass: resume what is
 * ready, run due timers, wait at most timeout seconds (default 0; math.huge:
 * no limit) for an fd or a timer. What the wait wakes runs in the next step.
 * The second result, how many descriptors the pass's poll gave back (0 when
 * it did not poll), is copas.step's answer (cosock.copas); cosock.step
 * returns the first only. */
static int l_step(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  double cap = 0;
  uint64_t polls;
  if (cn_running(lp)) {
    if (cn_current_slot(lp) < 0)
      return luaL_error(L, "cosock.step: the loop is already running");
    cn_push_label(L, lp, cn_current_slot(lp));
    return luaL_error(L, "cosock.step: called from inside task %s (a task cannot step the loop "
                      "that runs it)", lua_tostring(L, -1));
  }
  if (!lua_isnoneornil(L, 1)) {
    int isnum;
    cap = lua_tonumberx(L, 1, &isnum);
    if (!isnum)
      return cn_argerror(L, 1, "step", "number or nil expected, got %s",
                        luaL_typename(L, 1));
    if (!(cap >= 0))                           /* (NaN too) */
      return cn_argerror(L, 1, "step", "timeout must not be negative or NaN");
    if (isinf(cap)) cap = -1;
  }
  lua_settop(L, 0);
  polls = cn_run_polls(lp);
  cn_run_step(L, lp, cap);
  cn_embed_sync(L, lp);
  lua_pushinteger(L, cn_run_polls(lp) != polls ? cn_fd_nready(lp) : 0);
  return 2;
}

/* next_timeout() -> seconds, or nil (see cn_next_timeout). */
static int l_next_timeout(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  double t = cn_next_timeout(lp);
  if (t < 0) lua_pushnil(L);
  else lua_pushnumber(L, t);
  cn_embed_sync(L, lp);
  return 1;
}

/* task_handles() -> a list of a handle per live task, in slot order (one
 * made for a task whose handle the program dropped): for cosock.stop. */
static int l_task_handles(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int slot, n = 0;
  lua_settop(L, 0);
  lua_newtable(L);                             /* 1: the list */
  for (slot = 0; slot < cn_tasks_slots(lp); slot++) {
    cn_task *t = cn_task_get(lp, slot);
    unsigned epoch = cn_tasks_epoch(lp);
    if (t == NULL) continue;
    luaL_checkstack(L, 6, NULL);
    cn_task_push_handle(L, lp, slot);          /* 2 */
    if (lua_isnil(L, 2)) {
      cn_task_push_name(L, lp, slot);          /* 3 */
      cn_task_push_co(L, t);                   /* 4 */
      cn_hooks_new_handle(L, lp, 3, 4);        /* 5; may run finalizers */
      /* The task's handle from now on, unless a finalizer ended the task
       * or reset the loop meanwhile (then the handle reads as ended). */
      if (epoch == cn_tasks_epoch(lp) && (t = cn_task_get(lp, slot)) != NULL &&
          t->co == lua_tothread(L, 4))
        cn_task_set_handle(L, lp, t, 5);
      lua_replace(L, 2);
      lua_settop(L, 2);
    }
    lua_rawseti(L, 1, ++n);
  }
  return 1;
}

void cn_step_open(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"step", l_step}, {"next_timeout", l_next_timeout}, {"pollfd", cn_embed_pollfd},
    {"task_handles", l_task_handles}, {NULL, NULL}
  };
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}
