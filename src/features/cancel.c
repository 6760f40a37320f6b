/* cancel: the C side of cosock.scope's cancellation.
 *
 * handle:cancel() drops a task on the spot: none of its code runs again.
 * A scope's task (scope_mark) is cancelled another way, so that its cleanup
 * runs: its pending wait ends as a timeout would end it, and the wait raises
 * the cancellation value (a table only this file makes) where it would have
 * returned "timeout"; pcall, to-be-closed variables and the scope's deferred
 * functions see an ordinary error unwinding. A cancelled task that waits
 * again times out at once and raises again: it can catch the error, but
 * never wait. A deadline caps the timeout of every wait of the task (park.c
 * arm_timer asks the hook's wait_cap), and past it the wait raises too.
 *
 * Why an error: it is the only thing every Lua version unwinds through
 * pcall and to-be-closed variables alike, and a task that meant to handle a
 * failed call already handles errors there. */
#include "config.h"

#include <lauxlib.h>

#include "cancel.h"
#include "handle.h"
#include "hooks.h"
#include "lib/clock.h"
#include "run.h"
#include "task.h"

static char cancelled_key;                     /* registry: the cancellation value */

void cn_cancel_point(lua_State *L, cn_loop *lp) {
  cn_task *t = cn_task_get(lp, cn_current_slot(lp));
  if (t == NULL || !t->scoped) return;
  if (!t->cancel && !(t->cdeadline > 0 && cn_clock_now() >= t->cdeadline)) return;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &cancelled_key);
  lua_error(L);
}

void cn_cancel_request(cn_loop *lp, cn_task *t) {
  t->cancel = 1;
  if (t->state == T_PARKED) {                  /* as its timer would: the wait times out */
    t->timed_out = 1;
    cn_make_ready(lp, t);
  }
}

int cn_is_cancellation(lua_State *L, int idx) {
  int is;
  idx = lua_absindex(L, idx);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &cancelled_key);
  is = lua_rawequal(L, idx, -1);
  lua_pop(L, 1);
  return is;
}

/* scope_mark(co, cancelled, deadline) -> whether co is a live task, and
 * whether it was cancelled (so a scope learns of a handle:cancel() of its
 * own task); co may be the task's handle too. Makes it a scope's task (cancelled: true or false) with that
 * deadline (the monotime it ends at, nil: none); cancelled nil makes it an
 * ordinary task again, which handle:cancel drops on the spot. */
static int l_scope_mark(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  double deadline = luaL_optnumber(L, 3, 0);
  if (lua_type(L, 1) != LUA_TTABLE) luaL_checktype(L, 1, LUA_TTHREAD);
  if (deadline != deadline) return luaL_argerror(L, 3, "deadline is NaN");
  t = lua_type(L, 1) == LUA_TTABLE ? cn_handle_task(L, lp, 1) : cn_task_of(L, lp, 1);
  lua_pushboolean(L, t != NULL);
  if (t == NULL) return 1;
  lua_pushboolean(L, t->cancel);
  if (lua_isnoneornil(L, 2)) {
    t->hooked = t->scoped = t->cancel = 0;
    t->cdeadline = 0;
    return 2;
  }
  t->hooked = t->scoped = 1;
  t->cdeadline = deadline > 0 ? deadline : 0;
  if (!lua_toboolean(L, 2)) t->cancel = 0;
  else if (!t->cancel) cn_cancel_request(lp, t);
  /* A parked wait ends at the new deadline if that is earlier. */
  if (t->state == T_PARKED && t->cdeadline > 0 && (!t->armed || t->cdeadline < t->deadline))
    cn_timer_arm(lp, t, t->cdeadline);
  return 2;
}

/* cancel_point(): raises the cancellation value when the running task is a
 * cancelled scope's task (or past its deadline); for the waits in Lua. */
static int l_cancel_point(lua_State *L) {
  cn_cancel_point(L, cn_loop_get(L));
  return 0;
}

/* task_alive(co) -> whether co is a live task's coroutine (for cosock.sync,
 * which gives back what a task that ended held). */
static int l_task_alive(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTHREAD);
  lua_pushboolean(L, cn_task_of(L, cn_loop_get(L), 1) != NULL);
  return 1;
}

/* The hook's task questions (hooks.h), about a scope's task (hooked). */
static double wait_cap(const cn_task *t, double now, double when) {
  if (!t->scoped) return when;
  if (t->cancel) return now;
  if (t->cdeadline > 0 && (when < 0 || t->cdeadline < when)) return t->cdeadline;
  return when;
}

static void wait_begins(lua_State *L, cn_loop *lp, cn_task *t) {
  (void)t;
  cn_cancel_point(L, lp);
}

static int raised(lua_State *L, cn_loop *lp, int err) {
  (void)lp;
  return cn_is_cancellation(L, err) ? CN_ENDED_CANCELLED : CN_ENDED_RAISED;
}

static const cn_hook cancel_hook = {
  .name = "cancel", .wait_cap = wait_cap, .wait_begins = wait_begins, .raised = raised
};

static int cancelled_tostring(lua_State *L) {
  lua_pushliteral(L, "cosock.scope: cancelled");
  return 1;
}

void cn_cancel_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"scope_mark", l_scope_mark}, {"cancel_point", l_cancel_point}, {"task_alive", l_task_alive},
    {NULL, NULL}
  };
  luaL_checkstack(L, 4, NULL);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
  lua_newtable(L);                             /* the cancellation value */
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, cancelled_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "cosock.scope: cancelled");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &cancelled_key);
  lua_setfield(L, -2, "cancelled");
  cn_hook_add(L, lp, &cancel_hook);
}
