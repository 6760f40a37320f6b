/* timer_object: the timer objects of cosock.timer, as the SmartThings hub's
 * cosock offers them (create_oneshot, create_interval; handled, cancel and
 * the waker protocol). Owns loop->timers.
 *
 * A timer object is a full userdata holding a cn_xtimer: a node of the loop's
 * timer heap (task.c's, shared with the task timers). While the timer is
 * pending its node is queued at its deadline; when the loop reaches it,
 * cn_timers_run calls fire(), which marks the timer due and, when a waker is
 * set, lists it in loop->timers.due and turns this file's hook on at
 * CN_AT_TIMERS (hooks.h); the core then calls it (deliver), which takes each
 * listed timer's waker off and calls it. So a timer costs nothing
 * per pass until it is due, however many there are.
 *
 * A due timer stays due (readable to select) until handled(): a oneshot is
 * then over; an interval is queued again at the first tick of its grid
 * (origin + k * period, src/lib/grid.c) after now, so ticks missed while it
 * was due collapse into one and lateness never shifts the grid. cancel()
 * takes it out for good and wakes nobody.
 *
 * Anchoring: a timer's waker is its user value, and while one is set the
 * registry table r_anchor (light pointer -> timer) holds the timer, so the
 * collector frees neither before the waker runs or is taken back. A timer
 * nobody holds and nobody waits on is collected; its __gc takes its node out
 * of the heap (and gives its heap room back). reset() starts a new
 * generation: older timers act as cancelled and lose their wakers. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/clock.h"
#include "lib/grid.h"
#include "task.h"
#include "timer_object.h"
#include "messages.h"
#include "wakers.h"

#define ONE_YEAR (365.0 * 24 * 3600)

enum { TS_PENDING = 1, TS_DUE, TS_DONE, TS_CANCELLED };

typedef struct cn_tobj {
  cn_xtimer x;              /* first: the heap hands this pointer back */
  double origin, period;    /* interval: ticks at origin + k * period; oneshot: period 0 */
  double k;                 /* the tick the timer is pending for or due from */
  double deadline;          /* when it is (or was) due */
  double timeout;           /* settimeout, for wait() */
  uint64_t gen;             /* the reset generation it belongs to */
  unsigned char state;
  unsigned char has_timeout;
  unsigned char waker;      /* a waker is set (user value) and the timer anchored */
  unsigned char reserved;   /* holds a heap reservation (cn_xtimer_reserve) */
  cn_rlink due;             /* in loop->timers.due */
} cn_tobj;

static const char *const state_names[] = { "?", "pending", "due", "handled", "cancelled" };

/* The state, with timers of an older generation (before a reset) cancelled. */
static int state_of(const cn_loop *lp, const cn_tobj *t) {
  return t->gen == lp->timers.gen ? t->state : TS_CANCELLED;
}

/* Whether t can still wake someone: pending, with a waker set. The loop
 * counts those (loop->timers.nwaited) for its stall check: a timer nobody
 * waits on wakes nobody. */
static int waited(const cn_loop *lp, const cn_tobj *t) {
  return t->waker && state_of(lp, t) == TS_PENDING;
}

/* Sets t's state, keeping the count. */
static void set_state(cn_loop *lp, cn_tobj *t, int state) {
  int before = waited(lp, t);
  t->state = (unsigned char)state;
  lp->timers.nwaited += waited(lp, t) - before;
}

/* Sets t's waker flag, keeping the count. */
static void set_waker_flag(cn_loop *lp, cn_tobj *t, int on) {
  int before = waited(lp, t);
  t->waker = (unsigned char)on;
  lp->timers.nwaited += waited(lp, t) - before;
}

/* ---- the due list (no Lua) ---------------------------------------------- */

static const cn_hook tobj_hook;

/* (The hook is on at CN_AT_TIMERS while the list holds timers.) */
#define due_link(lp, t) cn_hook_list_push(lp, &(lp)->timers.due, &(t)->due, &tobj_hook, CN_AT_TIMERS)
#define due_unlink(lp, t) \
  cn_hook_list_remove(lp, &(lp)->timers.due, &(t)->due, &tobj_hook, CN_AT_TIMERS)
#define due_first(lp) CN_RLIST_HEAD(&(lp)->timers.due, cn_tobj, due)

/* How far ahead of `from` a node is queued: a year (the pollers take no
 * longer waits), or anything on cosock.sim's virtual clock, which polls
 * nothing and jumps to the node at once: there a deadline queued a year at a
 * time took a pass per virtual year (a wait of 1e300 s never ended). */
static double queue_limit(double from) { return cn_clock_is_virtual() ? HUGE_VAL : from + ONE_YEAR; }

/* Called by cn_timers_run when the node is due (it is out of the heap). A
 * later deadline is queued again for the rest (see queue_limit). */
static void fire(cn_loop *lp, cn_xtimer *x) {
  cn_tobj *t = (cn_tobj *)x;
  if (state_of(lp, t) != TS_PENDING) return;
  if (t->deadline > x->node.when) {
    double next = queue_limit(x->node.when);
    cn_xtimer_arm(lp, x, t->deadline < next ? t->deadline : next);
    return;
  }
  set_state(lp, t, TS_DUE);
  if (t->waker) due_link(lp, t);
}

/* Queues t for its deadline (see queue_limit). */
static void arm(cn_loop *lp, cn_tobj *t, double now) {
  double limit = queue_limit(now), when = t->deadline < limit ? t->deadline : limit;
  set_state(lp, t, TS_PENDING);
  cn_xtimer_arm(lp, &t->x, when);
}

/* ---- wakers -------------------------------------------------------------- */

/* Sets the waker of the timer t at index ud to the function at index fn:
 * anchors the timer first (the only step that can raise), then stores it. */
static void set_waker(lua_State *L, cn_loop *lp, cn_tobj *t, int ud, int fn) {
  cn_anchored_set(L, lp->timers.r_anchor, t, ud, fn);
  set_waker_flag(lp, t, 1);
}

/* Takes the waker of the timer t at index ud off (and the anchor); pushes it
 * (nil when none was set). Cannot fail. */
static void take_waker(lua_State *L, cn_loop *lp, cn_tobj *t, int ud) {
  ud = lua_absindex(L, ud);
  cn_getuservalue(L, ud);                     /* fn */
  if (!t->waker) return;
  set_waker_flag(lp, t, 0);
  due_unlink(lp, t);
  cn_anchored_drop(L, lp->timers.r_anchor, t, ud);
}

/* CN_AT_TIMERS: calls the waker of each timer that came due (taking it off
 * first). A waker's error propagates; the timers not reached stay listed. */
static void deliver(lua_State *L, cn_loop *lp, int point, cn_task *task) {
  cn_tobj *t;
  (void)point;
  (void)task;
  luaL_checkstack(L, 4, NULL);
  while ((t = due_first(lp)) != NULL) {
    due_unlink(lp, t);
    cn_push_ref(L, lp->timers.r_anchor);
    lua_rawgetp(L, -1, t);                     /* anchor, timer */
    if (lua_isnil(L, -1)) {                    /* (a listed timer is always anchored) */
      lua_pop(L, 2);
      continue;
    }
    take_waker(L, lp, t, -1);                  /* anchor, timer, fn */
    lua_call(L, 0, 0);                         /* anchor, timer: kept alive meanwhile */
    lua_pop(L, 2);
  }
}

/* While a pending timer has a waker set, it can still wake someone: the
 * loop must not stall. */
static int holds(const cn_loop *lp) { return lp->timers.nwaited > 0; }

static void tobj_reset(lua_State *L, cn_loop *lp);
static void tobj_free(lua_State *L, cn_loop *lp);
static const cn_hook tobj_hook = {
  .name = "timer_object", .at = deliver, .holds = holds, .reset = tobj_reset, .free = tobj_free
};

/* ---- methods ------------------------------------------------------------- */

/* The timer of this loop at index idx, or NULL. */
static cn_tobj *to_timer(lua_State *L, cn_loop *lp, int idx) {
  cn_tobj *t = lua_touserdata(L, idx);
  int ours = 0;
  if (t != NULL && lua_getmetatable(L, idx)) {
    cn_push_ref(L, lp->timers.r_mt);
    ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return ours ? t : NULL;
}

/* The timer of this loop at index idx, or a Lua error naming fname. */
static cn_tobj *check_timer(lua_State *L, cn_loop *lp, int idx, const char *fname) {
  cn_tobj *t = to_timer(L, lp, idx);
  if (t == NULL)
    cn_argerror(L, 1, fname, "cosock.timer expected, got %s",
               luaL_typename(L, idx));
  return t;
}

/* timer:handled() -> true when the timer was due: it stops being readable; an
 * interval is queued for its next tick after now. nil, "not due" when it is
 * not due (pending, or a oneshot already handled); nil, "cancelled" once
 * cancelled (or after reset). */
static int m_handled(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "handled");
  int st = state_of(lp, t);
  if (st != TS_DUE) {
    lua_pushnil(L);
    lua_pushstring(L, st == TS_CANCELLED ? "cancelled" : "not due");
    return 2;
  }
  due_unlink(lp, t);
  if (t->period == 0) {
    set_state(lp, t, TS_DONE);
  } else {
    double now = cn_clock_now();
    t->k = grid_next(t->origin, t->period, t->k, now);
    t->deadline = t->origin + t->k * t->period;
    arm(lp, t, now);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* timer:cancel() -> true. The timer is never due again and wakes nobody (a
 * task waiting on it keeps waiting for its other objects or its timeout).
 * Cancelling again, or a timer that fired already, changes nothing. */
static int m_cancel(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "cancel");
  if (state_of(lp, t) != TS_CANCELLED) {
    cn_xtimer_disarm(lp, &t->x);
    due_unlink(lp, t);
    set_state(lp, t, TS_CANCELLED);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* timer:setwaker("recvr", fn | nil): the waker protocol. One waker at a time;
 * a waker set while the timer is due is called at once. */
static int m_setwaker(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "setwaker");
  const char *kind = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  lua_settop(L, 3);
  if (kind == NULL || strcmp(kind, "recvr") != 0)
    return cn_wake_kind_error(L, 2);
  if (lua_isnil(L, 3)) {
    take_waker(L, lp, t, 1);
    return 0;
  }
  if (lua_type(L, 3) != LUA_TFUNCTION)
    return cn_argerror(L, 2, "setwaker", "function or nil expected, got %s",
                      luaL_typename(L, 3));
  if (t->waker)
    return luaL_error(L, "recvr " CN_MSG_SOCKET_WAKER_SET);
  set_waker(L, lp, t, 1, 3);
  if (state_of(lp, t) == TS_DUE) {             /* readable already: wake at once */
    take_waker(L, lp, t, 1);
    lua_call(L, 0, 0);
  }
  return 0;
}

/* timer:settimeout(t): how long wait() may wait (nil: no limit; 0 or less:
 * it fails at once unless due). Returns nothing, as the hub's does. */
static int m_settimeout(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "settimeout");
  if (lua_isnoneornil(L, 2)) {
    t->has_timeout = 0;
  } else {
    int isnum;
    double v = lua_tonumberx(L, 2, &isnum);
    if (!isnum || v != v)
      return cn_argerror(L, 1, "settimeout", "number expected, got %s",
                        isnum ? "nan" : luaL_typename(L, 2));
    t->has_timeout = 1;
    t->timeout = v;
  }
  return 0;
}

static int m_tostring(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "__tostring");
  lua_pushfstring(L, "timer{%s}: %p", t->period > 0 ? "interval" : "oneshot", (void *)t);
  return 1;
}

/* __gc: out of the heap and the due list, heap room given back. A timer
 * with a waker is anchored, so it is not collected while listed. */
static int m_gc(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = to_timer(L, lp, 1);
  if (t == NULL) return 0;                     /* not a timer, or the loop is gone (lua_close) */
  cn_xtimer_disarm(lp, &t->x);
  due_unlink(lp, t);
  set_waker_flag(lp, t, 0);                    /* (anchored while set: never here) */
  if (t->reserved) {
    t->reserved = 0;
    cn_xtimer_unreserve(lp);
  }
  return 0;
}

/* ---- module functions ---------------------------------------------------- */

/* create_oneshot(delay) / create_interval(interval) -> timer. A oneshot is
 * due once, delay seconds from now (0: at the next pass); an interval every
 * interval seconds, the first tick interval seconds from now. */
static int create(lua_State *L, int interval) {
  cn_loop *lp = cn_loop_get(L);
  const char *fname = interval ? "create_interval" : "create_oneshot";
  cn_tobj *t;
  double secs, now;
  if (lua_type(L, 1) != LUA_TNUMBER)
    return cn_argerror(L, 1, fname, "number expected, got %s",
                      luaL_typename(L, 1));
  secs = lua_tonumber(L, 1);
  if (!isfinite(secs) || secs < 0 || (interval && secs == 0))
    return cn_argerror(L, 1, fname, "finite number %s 0 expected, got %s",
                      interval ? ">" : ">=", luaL_tolstring(L, 1, NULL));
  t = lua_newuserdata(L, sizeof *t);
  memset(t, 0, sizeof *t);
  th_node_init(&t->x.node);
  t->x.fire = fire;
  /* No metatable (so no __gc) until the heap room is there. */
  if (cn_xtimer_reserve(lp) != 0) return luaL_error(L, CN_MSG_NO_MEMORY);
  t->reserved = 1;
  cn_push_ref(L, lp->timers.r_mt);
  lua_setmetatable(L, -2);
  now = cn_clock_now();
  t->gen = lp->timers.gen;
  t->origin = now;
  t->period = interval ? secs : 0;
  t->k = 1;
  t->deadline = now + secs;
  arm(lp, t, now);
  return 1;
}

static int l_oneshot(lua_State *L) { return create(L, 0); }
static int l_interval(lua_State *L) { return create(L, 1); }

/* timer_info(timer) -> state, deadline, timeout: the state ("pending", "due",
 * "handled", "cancelled"), the deadline it is pending for or was due at (on
 * the loop's monotonic clock), and its settimeout value (nil: none). For
 * wait() and the specs. */
static int l_info(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_tobj *t = check_timer(L, lp, 1, "timer_info");
  lua_pushstring(L, state_names[state_of(lp, t)]);
  lua_pushnumber(L, t->deadline - cn_clock_offset()); /* (the program's clock: lib/clock.h) */
  if (t->has_timeout) lua_pushnumber(L, t->timeout);
  else lua_pushnil(L);
  return 3;
}

/* grid_next(origin, period, last, now) -> k (see src/lib/grid.h), for
 * timer.every. */
static int l_grid_next(lua_State *L) {
  double origin = luaL_checknumber(L, 1), period = luaL_checknumber(L, 2);
  double last = luaL_checknumber(L, 3), now = luaL_checknumber(L, 4);
  luaL_argcheck(L, period > 0 && isfinite(period), 2, "finite number > 0 expected");
  lua_pushnumber(L, grid_next(origin, period, last, now));
  return 1;
}

void cn_tobj_init(lua_State *L, cn_loop *lp) {
  cn_hook_add(L, lp, &tobj_hook);
  lp->timers.gen = 1;
  lua_newtable(L);
  lp->timers.r_anchor = luaL_ref(L, LUA_REGISTRYINDEX);
}

void cn_tobj_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg methods[] = {
    {"handled", m_handled}, {"cancel", m_cancel}, {"setwaker", m_setwaker},
    {"settimeout", m_settimeout}, {NULL, NULL}
  };
  static const luaL_Reg funcs[] = {
    {"timer_oneshot", l_oneshot}, {"timer_interval", l_interval}, {"timer_info", l_info},
    {"grid_next", l_grid_next}, {NULL, NULL}
  };
  lua_createtable(L, 0, 4);                    /* loop, module, mt */
  lua_createtable(L, 0, 5);                    /* loop, module, mt, methods */
  lua_pushvalue(L, -4);
  luaL_setfuncs(L, methods, 1);
  lua_pushliteral(L, "timer{}");               /* the hub's timers say so too */
  lua_setfield(L, -2, "class");
  lua_pushvalue(L, -1);
  lua_setfield(L, -4, "timer_methods");
  lua_setfield(L, -2, "__index");              /* loop, module, mt */
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, m_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, m_tostring, 1);
  lua_setfield(L, -2, "__tostring");
  lp->timers.r_mt = luaL_ref(L, LUA_REGISTRYINDEX); /* loop, module */
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, funcs, 1);
}

/* (For reset: the timer at key has no waker now; its count is zeroed after.) */
static void forget_waker(void *key) { ((cn_tobj *)key)->waker = 0; }

/* reset(): every timer made so far is dead (acts as cancelled) and loses
 * its waker; the anchor table is emptied (no allocation: fields to nil). */
static void tobj_reset(lua_State *L, cn_loop *lp) {
  /* Every timer with a waker is in the anchor table: take the wakers off. */
  cn_anchored_clear(L, lp->timers.r_anchor, forget_waker);
  while (due_first(lp) != NULL) due_unlink(lp, due_first(lp));
  lp->timers.gen++;
  lp->timers.nwaited = 0;
}

static void tobj_free(lua_State *L, cn_loop *lp) {
  cn_tobj *t;
  while ((t = due_first(lp)) != NULL) due_unlink(lp, t);
  cn_unref(L, &lp->timers.r_anchor);
  cn_unref(L, &lp->timers.r_mt);
}
