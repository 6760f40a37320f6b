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
 * No wait names this file: every wait ends through park.c's cn_wait_end,
 * which asks the hook's checkpoint.
 *
 * Why an error: it is the only thing every Lua version unwinds through
 * pcall and to-be-closed variables alike, and a task that meant to handle a
 * failed call already handles errors there. */
#include "config.h"

#include <string.h>

#include <lauxlib.h>

#include "cancel.h"
#include "handle.h"
#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "park.h"
#include "task.h"

static char cancelled_key;                     /* registry: the cancellation value */

/* The deadline of the scope task t (0: none). */
static double deadline_of(const cn_loop *lp, const cn_task *t) {
  return t->slot < lp->cancel.cap ? lp->cancel.deadline[t->slot] : 0;
}

int cn_cancel_due(const cn_loop *lp, const cn_task *t) {
  double d;
  if (!(t->hooked & CN_SCOPED)) return 0;
  if (t->hooked & CN_CANCELLED) return 1;
  d = deadline_of(lp, t);
  return d > 0 && cn_clock_now() >= d;
}

/* Makes room for slot's deadline; raises on no memory (nothing changed). */
static void reserve(lua_State *L, cn_loop *lp, int slot) {
  int cap = lp->cancel.cap;
  double *d;
  if (slot < cap) return;
  cap = cap == 0 ? 64 : cap;
  while (cap <= slot) cap *= 2;
  d = cn_mem_resize(&lp->mem, lp->cancel.deadline, (size_t)lp->cancel.cap * sizeof *d,
                    (size_t)cap * sizeof *d);
  if (d == NULL) luaL_error(L, "cosock.scope: out of memory");
  memset(d + lp->cancel.cap, 0, (size_t)(cap - lp->cancel.cap) * sizeof *d);
  lp->cancel.deadline = d;
  lp->cancel.cap = cap;
}

/* Raises the cancellation value when t, a scope's task, is cancelled or
 * past its deadline; returns otherwise. The hook's checkpoint: the core asks
 * it as a wait of t begins (cn_prepark) and as one ends timed out
 * (park.c's cn_wait_end, the end every wait has). */
static void checkpoint(lua_State *L, cn_loop *lp, cn_task *t) {
  if (!(t->hooked & CN_SCOPED)) return;
  if (!(t->hooked & CN_CANCELLED)) {
    double d = deadline_of(lp, t);
    if (!(d > 0 && cn_clock_now() >= d)) return;
  }
  lua_rawgetp(L, LUA_REGISTRYINDEX, &cancelled_key);
  lua_error(L);
}

/* A parked wait ends now as if timed out (its end raises the cancellation
 * value: checkpoint), a later one at once. */
static void cancel_request(cn_loop *lp, cn_task *t) {
  unsigned char was = cn_cause_set(lp, CN_CAUSE_CANCEL); /* (a trace's wake cause) */
  t->hooked |= CN_CANCELLED;
  cn_wait_cut(lp, t);
  cn_cause_set(lp, was);
}

/* The hook's cancel question: handle:cancel() of a scope's task cancels it
 * so that its cleanup runs, instead of dropping it. */
static int cancel_task(cn_loop *lp, cn_task *t) {
  if (!(t->hooked & CN_SCOPED)) return 0;
  t->hooked |= CN_BY_HANDLE;                   /* (scope.lua: the cancel reaches every enclosing scope) */
  cancel_request(lp, t);
  return 1;
}

int cn_is_cancellation(lua_State *L, int idx) {
  int is;
  idx = lua_absindex(L, idx);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &cancelled_key);
  is = lua_rawequal(L, idx, -1);
  lua_pop(L, 1);
  return is;
}

static char slots_key;                         /* registry: coroutine -> slot (weak keys) */

/* The live task whose coroutine is at index idx, or NULL. The loop keeps no
 * map from coroutines to tasks (doc/footprint.md), so this file keeps one
 * for the coroutines it is asked about (weak keys, made on first use): a
 * slot found once is checked in O(1) after (the slot's task has this
 * coroutine, or the task ended: a task keeps its slot for life). The first
 * question about a coroutine that is not the running task's scans the
 * slots once. */
static cn_task *task_of(lua_State *L, cn_loop *lp, int idx) {
  lua_State *co = lua_tothread(L, idx);
  cn_task *t = cn_task_get(lp, cn_current_slot(lp));
  int i, n, isnum;
  lua_Integer slot;
  if (co == NULL) return NULL;
  if (t != NULL && t->co == co) return t;
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 4, NULL);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &slots_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 0);                  /* (may raise: nothing changed) */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &slots_key);
  }
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);                           /* map, slot|nil */
  slot = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (isnum) {
    lua_pop(L, 1);
    t = cn_task_get(lp, (int)slot);
    return t != NULL && t->co == co ? t : NULL;
  }
  for (i = 0, n = cn_tasks_slots(lp); i < n; i++)
    if ((t = cn_task_get(lp, i)) != NULL && t->co == co) break;
  if (i == n) {                                /* not a live task: it never will be */
    lua_pop(L, 1);
    return NULL;
  }
  lua_pushvalue(L, idx);
  lua_pushinteger(L, i);
  lua_rawset(L, -3);                           /* (may raise: the answer is the same next time) */
  lua_pop(L, 1);
  return t;
}

/* scope_mark(co, cancelled, deadline) -> whether co is a live task,
 * whether it was cancelled, and whether a handle:cancel() of it came since
 * it last became a scope's task (so a scope learns of a handle:cancel() of
 * its own task, also one that came when its scope had cancelled it
 * already); co may be the task's handle too. Makes it a scope's task
 * (cancelled: true or false) with that deadline (the monotime it ends at,
 * nil: none); cancelled nil makes it an ordinary task again, which
 * handle:cancel drops on the spot. */
static int l_scope_mark(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  double deadline = luaL_optnumber(L, 3, 0);
  if (!lua_isnoneornil(L, 3)) deadline += cn_clock_offset(); /* (the program's monotime: lib/clock.h) */
  if (lua_type(L, 1) != LUA_TTABLE) luaL_checktype(L, 1, LUA_TTHREAD);
  if (deadline != deadline) return luaL_argerror(L, 3, "deadline is NaN");
  t = lua_type(L, 1) == LUA_TTABLE ? cn_handle_task(L, lp, 1) : task_of(L, lp, 1);
  lua_pushboolean(L, t != NULL);
  if (t == NULL) return 1;
  lua_pushboolean(L, (t->hooked & CN_CANCELLED) != 0);
  lua_pushboolean(L, (t->hooked & CN_BY_HANDLE) != 0);
  if (lua_isnoneornil(L, 2)) {
    t->hooked = 0;
    if (t->slot < lp->cancel.cap) lp->cancel.deadline[t->slot] = 0;
    return 3;
  }
  reserve(L, lp, t->slot);                     /* (may raise: nothing changed) */
  t->hooked |= CN_SCOPED;
  lp->cancel.deadline[t->slot] = deadline = deadline > 0 ? deadline : 0;
  if (!lua_toboolean(L, 2)) t->hooked &= (unsigned char)~CN_CANCELLED;
  else if (!(t->hooked & CN_CANCELLED)) cancel_request(lp, t);
  cn_wait_recap(lp, t);                        /* a parked wait ends at the new deadline if earlier */
  return 3;
}

/* task_alive(co) -> whether co is a live task's coroutine (for cosock.sync,
 * which gives back what a task that ended held). */
static int l_task_alive(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTHREAD);
  lua_pushboolean(L, task_of(L, cn_loop_get(L), 1) != NULL);
  return 1;
}

/* The hook's task questions (hooks.h), about a scope's task (hooked). */
static double wait_cap(const cn_loop *lp, const cn_task *t, double now, double when) {
  double d;
  if (!(t->hooked & CN_SCOPED)) return when;
  if (t->hooked & CN_CANCELLED) return now;
  d = deadline_of(lp, t);
  if (d > 0 && (when < 0 || d < when)) return d;
  return when;
}

static void cancel_free(lua_State *L, cn_loop *lp) {
  (void)L;
  cn_mem_free(&lp->mem, lp->cancel.deadline, (size_t)lp->cancel.cap * sizeof *lp->cancel.deadline);
  lp->cancel.deadline = NULL;
  lp->cancel.cap = 0;
}

static int raised(lua_State *L, cn_loop *lp, int err) {
  (void)lp;
  return cn_is_cancellation(L, err) ? CN_ENDED_CANCELLED : CN_ENDED_RAISED;
}

static const cn_hook cancel_hook = {
  .name = "cancel", .wait_cap = wait_cap, .checkpoint = checkpoint, .raised = raised,
  .cancel = cancel_task,
  .free = cancel_free
};

static int cancelled_tostring(lua_State *L) {
  lua_pushliteral(L, "cosock.scope: cancelled");
  return 1;
}

void cn_cancel_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"scope_mark", l_scope_mark}, {"task_alive", l_task_alive},
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
