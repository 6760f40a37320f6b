/* tasks_warn: the C side of cosock.tasks (see tasks_warn.h, and
 * doc/task-dump.md for the contract).
 *
 * The stamps: from the first load of cosock.tasks, each resume notes, in an
 * array by slot, when the task's turn began, on the loop's clock (the
 * virtual one under cosock.sim): one coarse clock read per resume (a turn
 * is short, so for a task that waits it is about when its wait began). The
 * coarse clock (to within a few ms) costs a tight channel ping-pong 4%, the
 * precise one 12% (doc/task-dump.md). A task's entry is its own while it names its coroutine
 * (a later task of the slot takes it over).
 *
 * The warnings, each off until tasks.warnings turns it on:
 *   turn       the resume took longer than the limit: measured as the
 *              watchdog measures a turn (CLOCK_MONOTONIC around lua_resume);
 *   ready      the task's resume began later than the limit after the
 *              first resume of its pass's ready batch (the tasks before it
 *              in the batch ran meanwhile);
 *   leftover   every task that ended is handed to the Lua side, which looks
 *              at what it left registered;
 *   unwakeable when the loop is about to wait (no task ready), at most once
 *              per interval of the loop's clock, the Lua side's check runs.
 * A point of the pass must not raise or run Lua: what the points find is
 * noted in a fixed queue (C, and a registry table made with all its slots,
 * so that noting allocates nothing) and handed to the Lua side at the end of
 * the pass's resumes (CN_AT_RESUMES_DONE, which may raise). A full queue
 * counts what it could not take. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "accounting.h"
#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "metadata.h"
#include "names.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "tasks_warn.h"
#include "messages.h"

#define QN 32   /* warnings a pass can note before the queue is full */
#define QF 4    /* fields per noted warning in the queue table */

enum { W_TURN = 1, W_READY, W_LEFTOVER };

typedef struct stamp {
  const void *co;       /* whose entry it is */
  double began;         /* its last turn began (the loop's clock) */
} stamp;

typedef struct cn_taskrec {
  stamp *per;
  int cap;
  int64_t turn_ns, ready_ns;   /* limits (0: that warning off) */
  int leftover;
  double unwake_every;         /* seconds between idle checks (0: off) */
  double unwake_last;
  int unwake_dirty;            /* tasks ran since the last check */
  int64_t resume_ns;           /* the current resume began (real clock) */
  int64_t batch_ns;            /* the pass's first turn began (0: none yet) */
  int stamps;                  /* the turn stamps are kept (from the module's load) */
  int nq;
  lua_Integer dropped;
  int r_queue, r_flush, r_check;
} cn_taskrec;

static const cn_hook taskrec_hook;

/* Makes room for entries up to slot n - 1 (new ones zeroed): 0 on no memory. */
static int grow(cn_loop *lp, cn_taskrec *r, int n) {
  int cap = r->cap;
  stamp *p;
  if (n <= cap) return 1;
  cap = cap < 64 ? 64 : cap;
  while (cap < n) cap *= 2;
  p = cn_mem_resize(&lp->mem, r->per, (size_t)r->cap * sizeof *p, (size_t)cap * sizeof *p);
  if (p == NULL) return 0;
  memset(p + r->cap, 0, (size_t)(cap - r->cap) * sizeof *p);
  r->per = p;
  r->cap = cap;
  return 1;
}

/* The entry of the task in slot, taken over from an earlier task of the
 * slot if need be; NULL without memory (its stamps are then not kept). */
static stamp *entry(cn_loop *lp, cn_taskrec *r, cn_task *t) {
  stamp *s;
  if (t->slot >= r->cap && !grow(lp, r, cn_tasks_slots(lp))) return NULL;
  s = &r->per[t->slot];
  s->co = t->co;
  return s;
}

/* Notes a warning about t (kind, seconds) in the queue; allocates nothing. */
static void note(lua_State *L, cn_loop *lp, cn_taskrec *r, int kind, cn_task *t, double secs) {
  int base;
  if (r->nq >= QN || !lua_checkstack(L, 4) || !lua_checkstack(t->co, 2)) {
    r->dropped++;
    return;
  }
  base = r->nq * QF;
  cn_push_ref(L, r->r_queue);
  lua_pushinteger(L, kind);
  lua_rawseti(L, -2, base + 1);
  cn_task_push_co(L, t);
  lua_rawseti(L, -2, base + 2);
  cn_task_push_name(L, lp, t->slot);
  if (lua_isnil(L, -1)) {                      /* (a nil would leave a hole) */
    lua_pop(L, 1);
    lua_pushboolean(L, 0);
  }
  lua_rawseti(L, -2, base + 3);
  lua_pushnumber(L, secs);
  lua_rawseti(L, -2, base + 4);
  lua_pop(L, 1);
  r->nq++;
}

/* Hands what the points noted to the Lua side: flush(queue, n, dropped). */
static void flush(lua_State *L, cn_taskrec *r) {
  int n = r->nq;
  lua_Integer dropped = r->dropped;
  if (n == 0 && dropped == 0) return;
  r->nq = 0;
  r->dropped = 0;
  luaL_checkstack(L, 4, NULL);
  cn_push_ref(L, r->r_flush);
  if (!lua_isfunction(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  cn_push_ref(L, r->r_queue);
  lua_pushinteger(L, n);
  lua_pushinteger(L, dropped);
  lua_call(L, 3, 0);
}

static void taskrec_at(lua_State *L, cn_loop *lp, int point, cn_task *t) {
  cn_taskrec *r = lp->taskrec;
  switch (point) {
  case CN_AT_RESUME: {                         /* (one coarse clock read for the stamp) */
    if (r->stamps) {
      stamp *s = entry(lp, r, t);
      if (s != NULL) s->began = cn_clock_coarse();
    }
    if (r->turn_ns || r->ready_ns) {           /* (and one for the warnings' measure) */
      int64_t now = cn_acct_now();
      r->resume_ns = now;
      if (r->batch_ns == 0) r->batch_ns = now;
      else if (r->ready_ns && now - r->batch_ns > r->ready_ns)
        note(L, lp, r, W_READY, t, (double)(now - r->batch_ns) / 1e9);
    }
    break;
  }
  case CN_AT_RESUMED: {                        /* (on while turn is) */
    cn_task *cur = cn_task_get(lp, cn_current_slot(lp));
    if (cur != NULL && r->turn_ns && r->resume_ns) {
      int64_t d = cn_acct_now() - r->resume_ns;
      if (d > r->turn_ns) note(L, lp, r, W_TURN, cur, (double)d / 1e9);
    }
    r->resume_ns = 0;
    break;
  }
  case CN_AT_ENDED: {                          /* (on while leftover is) */
    cn_task *cur = cn_task_get(lp, cn_current_slot(lp));
    if (cur != NULL) note(L, lp, r, W_LEFTOVER, cur, 0);
    break;
  }
  case CN_AT_RESUMES_DONE:
    r->batch_ns = 0;
    flush(L, r);
    break;
  case CN_AT_DELIVER:                          /* (on while unwakeable is) */
    if (cn_pass_ran(lp)) r->unwake_dirty = 1;
    if (r->unwake_dirty && cn_tasks_ready(lp) == 0 && cn_tasks_live(lp) > 0) {
      double now = cn_clock_now();
      if (now - r->unwake_last >= r->unwake_every) {
        r->unwake_last = now;
        r->unwake_dirty = 0;
        luaL_checkstack(L, 2, NULL);
        cn_push_ref(L, r->r_check);
        if (lua_isfunction(L, -1)) lua_call(L, 0, 0);
        else lua_pop(L, 1);
      }
    }
    break;
  default:
    break;
  }
}

/* CN_AT_TIMEOUT (on while unwakeable is): a check put off because the
 * last one was less than an interval ago is due when the interval ends, so
 * the poll waits no longer than that. */
static double taskrec_timeout(cn_loop *lp, double timeout) {
  cn_taskrec *r = lp->taskrec;
  double left;
  if (!r->unwake_dirty || cn_tasks_live(lp) == 0) return timeout;
  left = r->unwake_last + r->unwake_every - cn_clock_now();
  if (left < 0) left = 0;
  return timeout < 0 || timeout > left ? left : timeout;
}

/* The points on for what is switched on now. */
static void points(cn_loop *lp) {
  cn_taskrec *r = lp->taskrec;
  int any = r->turn_ns || r->ready_ns || r->leftover;
  cn_hook_set(lp, &taskrec_hook, CN_AT(CN_AT_RESUME), r->stamps || r->turn_ns || r->ready_ns);
  cn_hook_set(lp, &taskrec_hook, CN_AT(CN_AT_RESUMED), r->turn_ns != 0);
  cn_hook_set(lp, &taskrec_hook, CN_AT(CN_AT_ENDED), r->leftover);
  cn_hook_set(lp, &taskrec_hook, CN_AT(CN_AT_RESUMES_DONE), any);
  cn_hook_set(lp, &taskrec_hook, CN_AT(CN_AT_DELIVER) | CN_AT(CN_AT_TIMEOUT), r->unwake_every > 0);
}

static const char *state_name(const cn_task *t) {
  switch (t->state) {
  case T_READY: return "ready";
  case T_RUNNING: return "running";
  default: return "waiting";
  }
}

/* tasks_list([tracebacks]) -> one table per live task, in slot order:
 * {co, slot (from 1), name, handle, state, site, since, last_wake, timeout,
 * left, waits [, traceback]}: since is the seconds since its last turn
 * began, on the loop's clock, nil when not known (no turn since the stamps
 * were on: last_wake, os.time() of its last turn, is there too); timeout:
 * its wait's as given; left: the seconds to its wait's deadline; waits: as
 * thread_states' (metadata.c), for a waiting task; the traceback only when
 * asked. */
static int l_tasks_list(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  double now = cn_clock_coarse(), precise = cn_clock_now(); /* (the stamps' clock; the timers') */
  int slot, n = 0, tracebacks = lua_toboolean(L, 1);
  lua_createtable(L, cn_tasks_live(lp), 0);
  for (slot = 0; slot < cn_tasks_slots(lp); slot++) {
    cn_task *t = cn_task_get(lp, slot);
    cn_taskrec *r;
    const stamp *s;
    lua_State *co;
    unsigned epoch = cn_tasks_epoch(lp);
    int parked;
    if (t == NULL) continue;
    /* Each allocation may run a finalizer that ends a task, spawns or (outside
     * run) resets the loop: t's fields are read right after its table is
     * made, and the task is looked up again after each call that may run one
     * (metadata.c does the same); one gone meanwhile is left out. */
    co = t->co;
    luaL_checkstack(L, 10, NULL);
    if (!lua_checkstack(co, 1)) luaL_error(L, CN_MSG_NO_MEMORY);
    cn_task_push_co(L, t);                     /* (kept: read while it is listed) */
    lua_createtable(L, 0, 13);
    if ((t = cn_task_same(lp, slot, co, epoch)) == NULL) {
      lua_pop(L, 2);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "co");
    /* (no collection runs from here to the name: numbers and known keys) */
    lua_pushinteger(L, (lua_Integer)slot + 1);
    lua_setfield(L, -2, "slot");
    /* (a task never resumed has no stamp: the slot's may be an ended task's
     * whose coroutine had the same address) */
    r = lp->taskrec;
    s = r != NULL && slot < r->cap && r->per[slot].co == co && t->last_wake != -1 ? &r->per[slot] : NULL;
    if (s != NULL) {
      lua_pushnumber(L, now - s->began);
      lua_setfield(L, -2, "since");
    }
    if (t->last_wake >= 0) {
      lua_pushinteger(L, (lua_Integer)t->last_wake);
      lua_setfield(L, -2, "last_wake");
    }
    if (t->state == T_PARKED && t->tmo != CN_TMO_NONE) {
      cn_push_wait_timeout(L, t);
      lua_setfield(L, -2, "timeout");
    }
    if (t->state == T_PARKED && t->armed) {
      lua_pushnumber(L, t->deadline > precise ? t->deadline - precise : 0);
      lua_setfield(L, -2, "left");
    }
    cn_task_push_name(L, lp, slot);
    lua_setfield(L, -2, "name");
    cn_task_push_handle(L, lp, slot);
    lua_setfield(L, -2, "handle");
    parked = t->state == T_PARKED;
    lua_pushstring(L, state_name(t));
    lua_setfield(L, -2, "state");
    if (parked && (t = cn_task_same(lp, slot, co, epoch)) != NULL) {
      cn_push_task_waits(L, lp, t);
      lua_setfield(L, -2, "waits");
    }
    if ((t = cn_task_same(lp, slot, co, epoch)) != NULL) {
      cn_site_push(L, lp, t->site, t->site_line);
      lua_setfield(L, -2, "site");
    }
    if (tracebacks) {
      luaL_traceback(L, co, NULL, co == L ? 1 : 0);
      lua_setfield(L, -2, "traceback");
    }
    if (cn_task_same(lp, slot, co, epoch) != NULL) {
      lua_rawseti(L, -3, ++n);
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);                           /* gone meanwhile: left out */
    }
  }
  return 1;
}

/* tasks_unbounded() -> for the unwakeable warning's idle check, the tasks
 * that wait with no deadline, each {co, slot, name, handle, waits, timeout}
 * (what it needs and no more: a check looks at every such task). Looked up
 * again after each allocation, as in tasks_list. */
static int l_tasks_unbounded(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int slot, n = 0;
  lua_newtable(L);
  for (slot = 0; slot < cn_tasks_slots(lp); slot++) {
    cn_task *t = cn_task_get(lp, slot);
    lua_State *co;
    unsigned epoch = cn_tasks_epoch(lp);
    if (t == NULL || t->state != T_PARKED || t->armed) continue;
    co = t->co;
    luaL_checkstack(L, 10, NULL);
    if (!lua_checkstack(co, 1)) luaL_error(L, CN_MSG_NO_MEMORY);
    cn_task_push_co(L, t);
    lua_createtable(L, 0, 6);
    if ((t = cn_task_same(lp, slot, co, epoch)) == NULL || t->state != T_PARKED || t->armed) {
      lua_pop(L, 2);
      continue;
    }
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "co");
    lua_pushinteger(L, (lua_Integer)slot + 1);
    lua_setfield(L, -2, "slot");
    if (t->tmo != CN_TMO_NONE) {
      cn_push_wait_timeout(L, t);
      lua_setfield(L, -2, "timeout");
    }
    cn_task_push_name(L, lp, slot);
    lua_setfield(L, -2, "name");
    cn_task_push_handle(L, lp, slot);
    lua_setfield(L, -2, "handle");
    cn_push_task_waits(L, lp, t);
    lua_setfield(L, -2, "waits");
    if (cn_task_same(lp, slot, co, epoch) != NULL) {
      lua_rawseti(L, -3, ++n);
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);
    }
  }
  return 1;
}

/* tasks_site(slot) -> "file:line" where the task in slot (from 1) was
 * spawned, or nil. */
static int l_tasks_site(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t = cn_task_get(lp, (int)luaL_checkinteger(L, 1) - 1);
  if (t == NULL) return 0;
  cn_site_push(L, lp, t->site, t->site_line);
  return 1;
}

/* tasks_stamps(on): keeps the turn stamps (on from the module's load), or
 * not (for the bench's paired rows, bench/cosock/switch_cost.lua, and the
 * spec of a task without a stamp): off forgets those kept (they would go
 * stale). */
static int l_tasks_stamps(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_taskrec *r = lp->taskrec;
  r->stamps = lua_toboolean(L, 1);
  if (!r->stamps && r->per) memset(r->per, 0, (size_t)r->cap * sizeof *r->per);
  points(lp);
  return 0;
}

/* Reads an optional limit in seconds at arg (nil or false: off). */
static int64_t limit_arg(lua_State *L, int arg, const char *what) {
  lua_Number s;
  if (lua_isnoneornil(L, arg) || (lua_isboolean(L, arg) && !lua_toboolean(L, arg))) return 0;
  if (lua_type(L, arg) != LUA_TNUMBER)
    return cn_argerror(L, arg, "tasks_warn", "%s: number expected, got %s", what, luaL_typename(L, arg));
  s = lua_tonumber(L, arg);
  if (!(s > 0) || isinf(s))
    return cn_argerror(L, arg, "tasks_warn", "%s: finite number > 0 expected", what);
  if (s > 1e9) s = 1e9;
  return s * 1e9 < 1 ? 1 : (int64_t)(s * 1e9);
}

/* tasks_warn(turn, ready, leftover, unwake_every, flush, check): turns the
 * warnings on or off (cosock.tasks checks the arguments for the program). */
static int l_tasks_warn(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_taskrec *r = lp->taskrec;
  int64_t turn = limit_arg(L, 1, "turn"), ready = limit_arg(L, 2, "ready");
  int64_t every = limit_arg(L, 4, "unwakeable interval");
  if (!lua_isnoneornil(L, 5)) luaL_checktype(L, 5, LUA_TFUNCTION);
  if (!lua_isnoneornil(L, 6)) luaL_checktype(L, 6, LUA_TFUNCTION);
  lua_settop(L, 6);
  lua_pushvalue(L, 5);
  if (lua_isnil(L, -1)) lua_pushboolean(L, 0), lua_replace(L, -2);
  lua_rawseti(L, LUA_REGISTRYINDEX, r->r_flush);  /* (existing slots: no allocation) */
  lua_pushvalue(L, 6);
  if (lua_isnil(L, -1)) lua_pushboolean(L, 0), lua_replace(L, -2);
  lua_rawseti(L, LUA_REGISTRYINDEX, r->r_check);
  r->turn_ns = turn;
  r->ready_ns = ready;
  r->leftover = lua_toboolean(L, 3);
  r->unwake_every = (double)every / 1e9;
  r->unwake_last = cn_clock_now() - r->unwake_every; /* (the first idle pass checks) */
  r->unwake_dirty = 1;
  r->batch_ns = 0;
  r->resume_ns = 0;
  points(lp);
  return 0;
}

/* reset(): the warnings go off (the stamps stay on: the module is loaded). */
static void taskrec_reset(lua_State *L, cn_loop *lp) {
  cn_taskrec *r = lp->taskrec;
  if (r == NULL) return;
  r->turn_ns = r->ready_ns = 0;
  r->leftover = 0;
  r->unwake_every = 0;
  r->unwake_dirty = 0;
  r->nq = 0;
  r->dropped = 0;
  r->batch_ns = r->resume_ns = 0;
  if (r->per) memset(r->per, 0, (size_t)r->cap * sizeof *r->per);
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, r->r_flush);
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, r->r_check);
  points(lp);
}

static void taskrec_free(lua_State *L, cn_loop *lp) {
  cn_taskrec *r = lp->taskrec;
  if (r == NULL) return;
  cn_unref(L, &r->r_queue);
  cn_unref(L, &r->r_flush);
  cn_unref(L, &r->r_check);
  cn_mem_free(&lp->mem, r->per, (size_t)r->cap * sizeof *r->per);
  cn_mem_free(&lp->mem, r, sizeof *r);
  lp->taskrec = NULL;
}

static const cn_hook taskrec_hook = {
  .name = "tasks", .at = taskrec_at, .timeout = taskrec_timeout, .reset = taskrec_reset, .free = taskrec_free
};

void cn_taskrec_init(lua_State *L, cn_loop *lp) { cn_hook_add(L, lp, &taskrec_hook); }

void cn_taskrec_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"tasks_list", l_tasks_list}, {"tasks_warn", l_tasks_warn}, {"tasks_stamps", l_tasks_stamps},
    {"tasks_unbounded", l_tasks_unbounded}, {"tasks_site", l_tasks_site}, {NULL, NULL}
  };
  if (lp->taskrec == NULL) {
    /* The registry slots first (they may raise), then the one allocation. */
    int i, q, f, c;
    cn_taskrec *r;
    lua_createtable(L, QN * QF, 0);            /* the queue, every slot made */
    for (i = 1; i <= QN * QF; i++) {
      lua_pushboolean(L, 0);
      lua_rawseti(L, -2, i);
    }
    q = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 0);
    f = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 0);
    c = luaL_ref(L, LUA_REGISTRYINDEX);
    r = cn_mem_resize(&lp->mem, NULL, 0, sizeof *r);
    if (r == NULL) {
      cn_unref(L, &q);
      cn_unref(L, &f);
      cn_unref(L, &c);
      luaL_error(L, CN_MSG_NO_MEMORY);
      return;
    }
    memset(r, 0, sizeof *r);
    r->r_queue = q;
    r->r_flush = f;
    r->r_check = c;
    r->stamps = 1;
    lp->taskrec = r;
    points(lp);
  }
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}
