/* accounting: cosock.set_accounting, and the accounting fields of
 * get_thread_metadata and stats (see accounting.h for what is counted
 * where). */
#include "config.h"

#include <lauxlib.h>

#include <string.h>

#include "accounting.h"
#include "mem.h"
#include "run.h"
#include "messages.h"

/* Makes room for entries up to slot n - 1 (new ones zeroed). 0 on no
 * memory (nothing changed). */
static int grow(cn_loop *lp, int n) {
  int cap = lp->acct.cap;
  cn_acct_task *p;
  if (n <= cap) return 1;
  cap = cap < 64 ? 64 : cap;
  while (cap < n) cap *= 2;
  p = cn_mem_resize(&lp->mem, lp->acct.per, (size_t)lp->acct.cap * sizeof *p, (size_t)cap * sizeof *p);
  if (p == NULL) return 0;
  memset(p + lp->acct.cap, 0, (size_t)(cap - lp->acct.cap) * sizeof *p);
  lp->acct.per = p;
  lp->acct.cap = cap;
  return 1;
}

/* t's turn begins while on: its entry, made or taken over from an earlier
 * task of the slot. Without memory its counts are not kept (never an error
 * at a point of the pass). An entry is taken over when it names no
 * coroutine or another one; the coroutine of a task that went may be
 * collected and its address handed to a later task's, so each entry is let
 * go when its task goes (forget, reset) and never names a dead task. */
static void claim(cn_loop *lp, cn_task *t) {
  cn_acct_task *a;
  if (t->slot >= lp->acct.cap && !grow(lp, cn_tasks_slots(lp))) return;
  a = &lp->acct.per[t->slot];
  if (a->co == t->co) return;
  a->busy_ns = 0;
  a->allocated = 0;
  a->co = t->co;
}

/* t goes (the core's FREED point: on from the first set_accounting(true),
 * whether accounting is on or off, for as long as entries exist). While
 * the turn that frees it is its own (a wait that could not be made,
 * recovery), what that turn ran up so far is counted and the rest is the
 * loop's. */
static void forget(cn_loop *lp, cn_task *t) {
  cn_acct_task *a = cn_acct_of(lp, t);
  if (lp->acct.owner == t) cn_acct_mark(lp, NULL);
  if (a != NULL) a->co = NULL;
}

/* The points the hook has on while accounting is. */
#define POINTS (CN_AT(CN_AT_RUN_BEGIN) | CN_AT(CN_AT_TURN) | CN_AT(CN_AT_DROPPED) | \
                CN_AT(CN_AT_ENDED) | CN_AT(CN_AT_RESUMES_DONE) | CN_AT(CN_AT_POLL) | \
                CN_AT(CN_AT_POLLED) | CN_AT(CN_AT_RUN_END))

/* The marks (called only while on). */
static void acct_at(lua_State *L, cn_loop *lp, int point, cn_task *t) {
  (void)L;
  switch (point) {
  case CN_AT_RUN_BEGIN:                        /* run() starts: the loop owns what follows */
    lp->acct.owner = NULL;
    /* fall through */
  case CN_AT_POLLED:                           /* the time in the poller (its wait and the */
    lp->acct.mark_ns = cn_acct_now();          /* wakes it hands out) is nobody's */
    lp->acct.mark_bytes = lp->acct.alloc->bytes;
    break;
  case CN_AT_TURN:                             /* a task's turn begins */
    claim(lp, t);
    cn_acct_mark(lp, t);
    break;
  case CN_AT_DROPPED:                          /* gone unresumed: what followed its mark */
    lp->acct.owner = NULL;                     /* goes to the loop */
    break;
  case CN_AT_FREED:                            /* (also while off) */
    forget(lp, t);
    break;
  case CN_AT_RESUMES_DONE:                     /* the last task's turn ends here */
    if (lp->acct.owner) cn_acct_mark(lp, NULL);
    break;
  default:                                     /* ENDED, POLL, RUN_END: the loop's from here */
    cn_acct_mark(lp, NULL);
  }
}

/* reset(): the loop's busy time starts again from zero (run.c zeroes the
 * passes and polls), and the entries are let go: the core dropped its tasks
 * without a FREED point. */
static void acct_reset(lua_State *L, cn_loop *lp) {
  int i;
  (void)L;
  lp->acct.loop_ns = 0;
  lp->acct.owner = NULL;
  for (i = 0; i < lp->acct.cap; i++) lp->acct.per[i].co = NULL;
}

static void acct_free(lua_State *L, cn_loop *lp) {
  (void)L;
  cn_mem_free(&lp->mem, lp->acct.per, (size_t)lp->acct.cap * sizeof *lp->acct.per);
  lp->acct.per = NULL;
  lp->acct.cap = 0;
}

static const cn_hook acct_hook = {
  .name = "accounting", .at = acct_at, .reset = acct_reset, .free = acct_free
};

/* Seconds from nanoseconds. */
static lua_Number secs(int64_t ns) { return (lua_Number)ns / 1e9; }

/* set_accounting(on) -> the previous setting. While on, every task's busy
 * time and allocated bytes, and the loop's own busy time, are measured. The
 * first time it is turned on it wraps the state's allocator (may raise a
 * memory error, before anything changed). */
static int l_set_accounting(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int was = lp->acct.on;
  if (lua_type(L, 1) != LUA_TBOOLEAN)
    return cn_argerror(L, 1, "set_accounting", "boolean expected, got %s",
                      luaL_typename(L, 1));
  if (lua_toboolean(L, 1) && !was) {
    if (lp->acct.alloc == NULL && (lp->acct.alloc = cn_alloc_count_install(L)) == NULL)
      return luaL_error(L, CN_MSG_NO_MEMORY);
    if (!grow(lp, cn_tasks_slots(lp))) return luaL_error(L, CN_MSG_NO_MEMORY);
    cn_hook_set(lp, &acct_hook, CN_AT(CN_AT_FREED), 1); /* (stays on: forget) */
    /* Counted from now: the rest of the current turn is its task's. */
    lp->acct.owner = cn_running(lp) ? cn_task_get(lp, cn_current_slot(lp)) : NULL;
    lp->acct.mark_ns = cn_acct_now();
    lp->acct.mark_bytes = lp->acct.alloc->bytes;
  }
  /* Turned off: what the owner ran up since the mark is still its own. */
  if (!lua_toboolean(L, 1) && was && cn_running(lp)) cn_acct_mark(lp, lp->acct.owner);
  lp->acct.on = lua_toboolean(L, 1);
  cn_hook_set(lp, &acct_hook, POINTS, lp->acct.on);
  lua_pushboolean(L, was);
  return 1;
}

void cn_acct_open(lua_State *L, cn_loop *lp) {
  cn_hook_add(L, lp, &acct_hook);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushcclosure(L, l_set_accounting, 1);
  lua_setfield(L, -2, "set_accounting");
}

/* What the owner has run up since the mark and no mark has added yet (when
 * asked from inside a turn, or from the loop itself). Only while on. */
static int64_t pending_ns(cn_loop *lp) {
  return cn_running(lp) ? cn_acct_now() - lp->acct.mark_ns : 0;
}
static uint64_t pending_bytes(cn_loop *lp) {
  return cn_running(lp) ? lp->acct.alloc->bytes - lp->acct.mark_bytes : 0;
}

void cn_acct_push_task(lua_State *L, cn_loop *lp, cn_task *t) {
  lua_pushinteger(L, t->resumes);
  lua_setfield(L, -2, "resumes");
  if (lp->acct.on) {
    int own = cn_running(lp) && lp->acct.owner == t;
    const cn_acct_task *a = cn_acct_of(lp, t);
    lua_pushnumber(L, secs((a ? a->busy_ns : 0) + (own ? pending_ns(lp) : 0)));
    lua_setfield(L, -2, "busy");
    lua_pushinteger(L, (lua_Integer)((a ? a->allocated : 0) + (own ? pending_bytes(lp) : 0)));
    lua_setfield(L, -2, "allocated");
  }
}

void cn_acct_push_stats(lua_State *L, cn_loop *lp) {
  /* Neither ready nor parked: the task being resumed. */
  int parked = cn_tasks_live(lp) - cn_tasks_runnable(lp) - (cn_current_slot(lp) >= 0);
  lua_pushinteger(L, parked > 0 ? parked : 0);
  lua_setfield(L, -2, "parked");
  lua_pushinteger(L, (lua_Integer)cn_run_passes(lp));
  lua_setfield(L, -2, "passes");
  lua_pushinteger(L, (lua_Integer)cn_run_polls(lp));
  lua_setfield(L, -2, "polls");
  if (lp->acct.on) {
    lua_pushnumber(L, secs(lp->acct.loop_ns + (lp->acct.owner == NULL ? pending_ns(lp) : 0)));
    lua_setfield(L, -2, "busy");
  }
}
