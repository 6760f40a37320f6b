/* predicate: the predicate waits of cosock.when (after schedlua's
 * waitForPredicate), evaluated by the loop. Owns loop->preds.
 *
 * when.wait(pred) calls pred at once; while it is false the task parks with
 * no fd (cn_prepark: only this file's wake or its timeout ends the wait) and
 * its wait is listed here: the task's slot and wait id in loop->preds.w[i],
 * and in the registry table ws the predicate at 2i+1 and a wait table w at
 * 2i+2 (where the result goes).
 * Once per pass, after the ready list drained, the core calls this file's
 * hook (CN_AT_RESUMES_DONE, on while waits are listed: preds_pass):
 * when the pass resumed tasks, or the interval (10 ms by default) went by
 * since the last evaluation, every listed predicate is called, oldest wait
 * first. A true result is stored in w and the task made ready; so is an
 * error (the task raises it). While predicates wait, the poll's timeout is
 * capped by the next evaluation: an idle loop wakes every interval, calls the
 * predicates and sleeps again, and never spins.
 *
 * Predicates run in an evaluator coroutine of this file's, so that a yield
 * in one is seen (its resume says LUA_YIELD) and made an error, and so that
 * no cosock call made by a predicate takes it for a task's own coroutine.
 *
 * A wait that ended without this file (its timeout, a cancel, reset) is
 * found out when its turn comes: its task no longer has that wait id. The
 * entry then goes without its predicate being called. Where the task cannot
 * park directly (a coroutine of the task's, whose yields it forwards), w is
 * yielded as an object with setwaker, and the entry is valid while w holds a
 * waker that is not stale. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "compat.h"
#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "messages.h"
#include "park.h"
#include "predicate.h"
#include "run.h"
#include "task.h"
#include "watchdog.h"

#define DEFAULT_INTERVAL 0.010

typedef struct cn_pwait {
  int slot;                 /* the waiting task (-1: not known) */
  lua_Integer waitid;       /* its parked wait; 0: a wait through w's waker */
  unsigned char until_nil;  /* whenever: a nil result ends the wait too */
  unsigned char gone;       /* ended: dropped by the next compaction */
} cn_pwait;

/* pred_wait's flags (cosock/when.lua passes them). */
enum { PW_LATER = 1,        /* do not call the predicate before parking */
       PW_UNTIL_NIL = 2 };  /* a nil result (not false) ends the wait, returning nothing */

/* What one evaluation gave. */
enum { EV_FALSE, EV_NIL, EV_TRUE, EV_ERROR };

/* pred_wait's stack: the arguments, then what it keeps across its yields. */
enum { A_PRED = 1, A_TIMEOUT, A_FLAGS, A_DEADLINE, A_W, A_RESUMED };

/* ---- evaluation -------------------------------------------------------- */

/* Pushes the coroutine predicates are called in and returns it: the
 * evaluator, made on first use, or a new one when the evaluator is in use (a
 * predicate being evaluated waits for another). Raises only for memory. */
static lua_State *push_evaluator(lua_State *L, cn_loop *lp) {
  luaL_checkstack(L, 3, NULL);
  if (lp->preds.busy > 0) return lua_newthread(L);
  cn_push_ref(L, lp->preds.r_ev);
  if (!lua_isthread(L, -1)) {
    lua_pop(L, 1);
    lua_newthread(L);
    lua_pushvalue(L, -1);
    lua_rawseti(L, LUA_REGISTRYINDEX, lp->preds.r_ev); /* an existing slot: no allocation */
  }
  return lua_tothread(L, -1);
}

/* The evaluator ev stopped with status (an error or a yield in a
 * predicate): it cannot run another predicate. Pushes the error on L, what
 * the predicate raised or a message for one that yielded; EV_ERROR. */
static int ev_failed(lua_State *L, cn_loop *lp, lua_State *ev, int status) {
  cn_push_ref(L, lp->preds.r_ev);
  if (lua_tothread(L, -1) == ev) {
    lua_pushboolean(L, 0);
    lua_rawseti(L, LUA_REGISTRYINDEX, lp->preds.r_ev);
  }
  lua_pop(L, 1);
  if (status == LUA_YIELD) {
    lua_settop(ev, 0);
    if (cn_close_thread(L, ev) != LUA_OK) lua_pop(L, 1); /* (5.4: its to-be-closed variables) */
    lua_pushliteral(L, "cosock.when: a predicate must not yield "
                       "(it waited or yielded while being evaluated)");
  } else {
    lua_xmove(ev, L, 1);
  }
  return EV_ERROR;
}

/* Calls the predicate on top of L (popped), without arguments, in ev (from
 * push_evaluator, below it on L's stack). EV_TRUE: its values are pushed,
 * *nres of them. EV_FALSE / EV_NIL (its first value false / nil, or none):
 * nothing is pushed. EV_ERROR: the error is pushed, what the predicate raised
 * or a message for one that yielded; ev is then done for (the evaluator is
 * made again on next use). Raises only for memory. */
static int call_in(lua_State *L, cn_loop *lp, lua_State *ev, int *nres) {
  int status, n, first;
  lua_xmove(L, ev, 1);
  lp->preds.busy++;
  status = cn_resume(ev, L, 0, &n);
  lp->preds.busy--;
  if (status == LUA_OK) {
    first = n > 0 ? lua_type(ev, -n) : LUA_TNIL;
    if (first == LUA_TNIL || (first == LUA_TBOOLEAN && !lua_toboolean(ev, -n))) {
      lua_settop(ev, 0);                       /* ready for the next one */
      return first == LUA_TNIL ? EV_NIL : EV_FALSE;
    }
    if (lua_checkstack(L, n + 1)) {
      lua_xmove(ev, L, n);
      *nres = n;
      return EV_TRUE;
    }
    lua_settop(ev, 0);
    lua_pushliteral(L, "cosock.when: a predicate returned too many values");
    return EV_ERROR;
  }
  return ev_failed(L, lp, ev, status);
}

/* Calls the predicate at index pred as call_in does, in a coroutine of its
 * own choosing; pushes what call_in pushes. */
static int eval(lua_State *L, cn_loop *lp, int pred, int *nres) {
  int r, base;
  lua_State *ev;
  pred = lua_absindex(L, pred);
  ev = push_evaluator(L, lp);
  base = lua_gettop(L);
  lua_pushvalue(L, pred);
  r = call_in(L, lp, ev, nres);
  lua_remove(L, base);                         /* the coroutine */
  return r;
}

/* ---- the list of waits ------------------------------------------------- */

static const cn_hook preds_hook;

/* The hook is on while waits are listed (some may have ended: the pass
 * drops them). */
static void listed(cn_loop *lp) {
  cn_hook_set(lp, &preds_hook, CN_AT(CN_AT_RESUMES_DONE) | CN_AT(CN_AT_TIMEOUT), lp->preds.n > 0);
}

/* Makes room for one more wait (may raise). */
static void reserve(lua_State *L, cn_loop *lp) {
  int cap;
  cn_pwait *w;
  if (lp->preds.n < lp->preds.cap) return;
  cap = lp->preds.cap ? lp->preds.cap * 2 : 16;
  if (cap <= 0 || (size_t)cap > ((size_t)-1) / sizeof *w) luaL_error(L, CN_MSG_NO_MEMORY);
  w = cn_mem_resize(&lp->mem, lp->preds.w, (size_t)lp->preds.cap * sizeof *w, (size_t)cap * sizeof *w);
  if (w == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
  lp->preds.w = w;
  lp->preds.cap = cap;
}

/* Marks wait i ended (once). */
static void drop(cn_loop *lp, int i) {
  if (lp->preds.w[i].gone) return;
  lp->preds.w[i].gone = 1;
  lp->preds.live--;
}

/* Where wait i's predicate and wait table are in ws (1-based, side by side:
 * the pass reads the predicates in order and touches w only to deliver). */
#define PRED_KEY(i) (2 * (lua_Integer)(i) + 1)
#define W_KEY(i) (2 * (lua_Integer)(i) + 2)

/* For a parked wait (waitid != 0): 1 while e is still the wait it was
 * listed for, else 0; -1 for a wait through w's waker (still_waits looks). */
static inline int parked_waits(cn_loop *lp, const cn_pwait *e) {
  cn_task *t;
  if (e->gone) return 0;
  if (e->waitid == 0) return -1;
  t = cn_task_get(lp, e->slot);
  return t != NULL && t->waitid == e->waitid && t->state == T_PARKED && !t->timed_out;
}

/* True while wait i is still the wait it was listed for. ws: the index of
 * the ws table. Leaves the stack as it was. */
static int still_waits(lua_State *L, cn_loop *lp, int i, int ws) {
  int ok = parked_waits(lp, &lp->preds.w[i]);
  if (ok >= 0) return ok;
  lua_rawgeti(L, ws, W_KEY(i));                /* w */
  lua_getfield(L, -1, "waker");
  ok = lua_isfunction(L, -1) && !cn_waker_stale(L, lp, -1);
  lua_pop(L, 2);
  return ok;
}

/* Drops the ended waits from both lists, keeping the order. Moves values
 * within ws only to keys that hold values: no allocation. */
static void compact(lua_State *L, cn_loop *lp, int ws) {
  int i, j = 0, n = lp->preds.n;
  if (lp->preds.live == n) return;
  for (i = 0; i < n; i++) {
    if (lp->preds.w[i].gone) continue;
    if (i != j) {
      lp->preds.w[j] = lp->preds.w[i];
      lua_rawgeti(L, ws, PRED_KEY(i));
      lua_rawseti(L, ws, PRED_KEY(j));
      lua_rawgeti(L, ws, W_KEY(i));
      lua_rawseti(L, ws, W_KEY(j));
    }
    j++;
  }
  for (i = j; i < n; i++) {
    lua_pushnil(L);
    lua_rawseti(L, ws, PRED_KEY(i));
    lua_pushnil(L);
    lua_rawseti(L, ws, W_KEY(i));
  }
  lp->preds.n = j;
  listed(lp);
  if (lp->preds.cap > 64 && j < lp->preds.cap / 4) { /* shrinking cannot fail */
    int cap = lp->preds.cap / 2;
    lp->preds.w = cn_mem_resize(&lp->mem, lp->preds.w, (size_t)lp->preds.cap * sizeof *lp->preds.w,
                                (size_t)cap * sizeof *lp->preds.w);
    lp->preds.cap = cap;
  }
}

/* Forgets every wait (nobody waits any more, or reset). Cannot fail. */
static void forget_all(lua_State *L, cn_loop *lp) {
  int i;
  if (lp->preds.n > 0) {
    cn_push_ref(L, lp->preds.r_ws);
    for (i = 1; i <= 2 * lp->preds.n; i++) {
      lua_pushnil(L);
      lua_rawseti(L, -2, i);
    }
    lua_pop(L, 1);
  }
  cn_mem_free(&lp->mem, lp->preds.w, (size_t)lp->preds.cap * sizeof *lp->preds.w);
  lp->preds.w = NULL;
  lp->preds.n = lp->preds.cap = lp->preds.live = 0;
  listed(lp);
}

/* ---- the wait ---------------------------------------------------------- */

static int wait_k(lua_State *L, int status, lua_KContext ctx);

/* Lists the calling task's wait on the predicate at A_PRED and yields. */
static int park(lua_State *L, cn_loop *lp) {
  int flags = (int)lua_tointeger(L, A_FLAGS), has_timeout = !lua_isnil(L, A_DEADLINE);
  double left = 0;
  lua_Integer wid;
  cn_pwait *e;
  if (!cn_isyieldable(L)) {
    lua_pushliteral(L, "when.wait: the predicate is false and only a task can wait "
                       "(called outside a task)");
    return lua_error(L);
  }
  if (has_timeout) {
    left = lua_tonumber(L, A_DEADLINE) - cn_clock_now();
    if (left < 0) left = 0;
  }
  luaL_checkstack(L, 6, NULL);
  reserve(L, lp);
  lua_newtable(L);                             /* w */
  lua_replace(L, A_W);
  cn_push_ref(L, lp->preds.r_ws);
  lua_pushvalue(L, A_PRED);
  lua_rawseti(L, -2, PRED_KEY(lp->preds.n));   /* may raise: nothing is listed yet */
  lua_pushvalue(L, A_W);
  lua_rawseti(L, -2, W_KEY(lp->preds.n));
  lua_pop(L, 1);
  /* From cn_prepark to the yield nothing may raise (the loop would take a
   * later yield for the one announced). */
  {
    cn_tmo tmo;
    tmo.set = (unsigned char)has_timeout;
    tmo.is_int = 0;
    tmo.ival = 0;
    tmo.secs = left;
    cn_what_set(lp, CN_WHAT_PREDICATE);        /* (for a trace: what it waits on) */
    wid = cn_prepark(L, lp, K_RECV, &tmo, 0);
  }
  e = &lp->preds.w[lp->preds.n++];
  listed(lp);
  e->slot = cn_current_slot(lp);
  e->waitid = wid;
  e->until_nil = (flags & PW_UNTIL_NIL) != 0;
  e->gone = 0;
  lp->preds.live++;
  if (wid != 0) {
    lua_pushvalue(L, A_W);
    return cn_yieldk(L, 1, 0, wait_k);
  }
  /* Yields that the task forwards from a coroutine of its own: w is waited
   * on as an object (the loop calls w:setwaker). A raise from here on leaves
   * a wait without a waker, which the next evaluation drops. */
  cn_push_ref(L, lp->preds.r_mt);
  lua_setmetatable(L, A_W);
  lua_createtable(L, 1, 0);                    /* recvt */
  lua_pushvalue(L, A_W);
  lua_rawseti(L, -2, 1);
  lua_pushnil(L);
  if (has_timeout) lua_pushnumber(L, left);
  else lua_pushnil(L);
  lua_pushlightuserdata(L, CN_INTERNAL);
  return cn_yieldk(L, 4, 0, wait_k);
}

/* After the wait: the predicate's values, its error, nothing (whenever's nil),
 * or nil, "timeout". A wake that was none of these waits again. */
static int wait_k(lua_State *L, int status, lua_KContext ctx) {
  cn_loop *lp = cn_loop_get(L);
  int timed_out = lua_gettop(L) >= A_RESUMED + 2 && cn_resumed_timeout(L, A_RESUMED + 2);
  (void)status;
  (void)ctx;
  lua_settop(L, A_W);
  if (lua_getfield(L, A_W, "n") == LUA_TNUMBER) {
    lua_Integer i, n = lua_tointeger(L, -1);
    luaL_checkstack(L, (int)n, "too many results to return");
    for (i = 1; i <= n; i++) lua_rawgeti(L, A_W, i);
    return (int)n;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, A_W, "failed") != LUA_TNIL) {
    lua_getfield(L, A_W, "err");
    return lua_error(L);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, A_W, "ended") != LUA_TNIL) return 0;
  lua_pop(L, 1);
  if (cn_wait_end(L, lp, timed_out || (!lua_isnil(L, A_DEADLINE) &&
                                       lua_tonumber(L, A_DEADLINE) <= cn_clock_now()))) {
    lua_pushnil(L);
    lua_pushliteral(L, CN_MSG_TIMEOUT);
    return 2;
  }
  lua_pushnil(L);
  lua_replace(L, A_W);
  return park(L, lp);
}

/* pred_wait(pred, timeout, flags) -> pred's values once its first value is
 * true; nil, "timeout"; nothing when PW_UNTIL_NIL and pred returned nil.
 * An error of pred, or a yield in it, is raised. cosock/when.lua checks the
 * arguments (timeout: nil or a number >= 0). */
static int l_pred_wait(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int flags;
  CN_RESUMABLE(L);
  lua_settop(L, A_FLAGS);
  flags = (int)luaL_optinteger(L, A_FLAGS, 0);
  if (lua_isnil(L, A_TIMEOUT)) {
    lua_pushnil(L);                            /* deadline */
  } else {
    double t = luaL_checknumber(L, A_TIMEOUT);
    lua_pushnumber(L, cn_clock_now() + (t > 0 ? t : 0));
  }
  lua_pushnil(L);                              /* w, made when it parks */
  if (!(flags & PW_LATER)) {
    int nres = 0, r = eval(L, lp, A_PRED, &nres);
    if (r == EV_TRUE) return nres;
    if (r == EV_ERROR) return lua_error(L);
    if (r == EV_NIL && (flags & PW_UNTIL_NIL)) return 0;
  }
  return park(L, lp);
}

/* w:setwaker("recvr", fn), for a wait table yielded as an object. */
static int w_setwaker(lua_State *L) {
  const char *kind = lua_tostring(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (kind == NULL || strcmp(kind, "recvr") != 0)
    return cn_wake_kind_error(L, 2);
  lua_settop(L, 3);
  lua_setfield(L, 1, "waker");
  return 0;
}

/* pred_interval([s]) -> the interval before the call; with s (a finite
 * number > 0), sets it. */
static int l_pred_interval(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_pushnumber(L, lp->preds.interval);
  if (!lua_isnoneornil(L, 1)) {
    double s = luaL_checknumber(L, 1);
    luaL_argcheck(L, s > 0 && s < HUGE_VAL, 1, "finite number > 0 expected");
    lp->preds.interval = s;
  }
  return 1;
}

/* ---- the loop's side --------------------------------------------------- */

/* Stores what wait i's predicate gave in its wait table w (at index w; the
 * values or the error from index v on, nres values), then ends the wait and
 * wakes its task. Storing may raise (memory): the wait is then still listed.
 * ws: the index of the ws table. */
static void deliver(lua_State *L, cn_loop *lp, int i, int ws, int w, int r, int v, int nres) {
  int k, status = LUA_OK;
  unsigned char was;
  cn_pwait e;
  if (r == EV_TRUE) {
    for (k = 0; k < nres; k++) {
      lua_pushvalue(L, v + k);
      lua_rawseti(L, w, k + 1);
    }
    lua_pushinteger(L, nres);
    lua_setfield(L, w, "n");                   /* last: n says the values are there */
  } else if (r == EV_ERROR) {
    lua_pushvalue(L, v);
    lua_setfield(L, w, "err");
    lua_pushboolean(L, 1);
    lua_setfield(L, w, "failed");
  } else {
    lua_pushboolean(L, 1);
    lua_setfield(L, w, "ended");
  }
  e = lp->preds.w[i];
  /* (storing may have run a finalizer, which may have ended the wait) */
  if (!still_waits(L, lp, i, ws)) {
    drop(lp, i);
    return;
  }
  drop(lp, i);                                 /* first: a waker's error cannot deliver twice */
  was = cn_cause_set(lp, CN_CAUSE_PREDICATE);  /* (a trace's wake cause) */
  if (e.waitid != 0) {
    cn_deliver(L, lp, cn_task_get(lp, e.slot), 0);
  } else {
    lua_getfield(L, w, "waker");
    status = lua_pcall(L, 0, 0, 0);
  }
  cn_cause_set(lp, was);
  if (status != LUA_OK) lua_error(L);
}

/* A run of evaluations: from wait from up to wait n - 1 (ws at index ws of
 * L), until a predicate gives what ends its wait. Sets *at to that wait and
 * returns EV_TRUE or EV_NIL (its values pushed on L, *nres of them) or
 * EV_ERROR (the error pushed, what the predicate raised or the message for
 * one that yielded); EV_FALSE when the run ended with none. Waits that ended
 * otherwise are dropped uncalled. Each call is a turn of the waiting task's
 * for the watchdog. Raises only for memory. */
static int eval_run(lua_State *L, cn_loop *lp, int ws, int from, int n, int *at, int *nres);

#if LUA_VERSION_NUM >= 503
/* (Never runs: a predicate that yields ends the evaluator; lua_callk's
 * continuation only lets the yield through, to be seen as one.) */
static int run_k(lua_State *ev, int status, lua_KContext ctx) {
  (void)ev;
  (void)status;
  (void)ctx;
  return 0;
}

/* The evaluator's body for a run (5.3, 5.4): run_body(ws, from, n, lp, at)
 * calls the predicates itself, one lua_callk each, rather than one resume
 * of the evaluator per predicate: half the cost of a waiting predicate.
 * Returns nothing when no predicate ended its wait, else the wait's index
 * and the predicate's values; before each call *at is the wait being
 * evaluated (for an error or a yield, which end the run). */
static int run_body(lua_State *ev) {
  int i = (int)lua_tointeger(ev, 2), n = (int)lua_tointeger(ev, 3);
  cn_loop *lp = (cn_loop *)lua_touserdata(ev, 4);
  int *at = (int *)lua_touserdata(ev, 5);
  lua_settop(ev, 2);
  for (; i < n; i++) {
    int ok = parked_waits(lp, &lp->preds.w[i]);
    if (ok < 0) ok = still_waits(ev, lp, i, 1);
    if (!ok) {
      drop(lp, i);
      continue;
    }
    *at = i;
    lua_rawgeti(ev, 1, PRED_KEY(i));
    cn_wd_watch_for(lp, ev, lp->preds.w[i].slot); /* (a turn of its own) */
    lua_callk(ev, 0, LUA_MULTRET, 0, run_k);
    cn_wd_unwatch(lp);
    /* (its first value: true, or nil for whenever's end) */
    if (lua_toboolean(ev, 3) || (lp->preds.w[i].until_nil && lua_isnoneornil(ev, 3))) {
      if (!lua_checkstack(ev, 1))              /* (the values may fill the stack) */
        return luaL_error(ev, "cosock.when: a predicate returned too many values");
      lua_pushinteger(ev, i);
      lua_replace(ev, 2);
      return lua_gettop(ev) - 1;               /* i, values... */
    }
    lua_settop(ev, 2);
  }
  return 0;
}

static int eval_run(lua_State *L, cn_loop *lp, int ws, int from, int n, int *at, int *nres) {
  lua_State *ev;
  int status, nout, first, evi, r;
  ev = push_evaluator(L, lp);                  /* (on L while it runs: it stays alive) */
  evi = lua_gettop(L);
  lua_pushcfunction(ev, run_body);             /* (a light C function: no allocation) */
  lua_pushvalue(L, ws);
  lua_xmove(L, ev, 1);
  lua_pushinteger(ev, from);
  lua_pushinteger(ev, n);
  lua_pushlightuserdata(ev, lp);
  lua_pushlightuserdata(ev, at);
  *at = -1;
  lp->preds.busy++;
  status = cn_resume(ev, L, 5, &nout);
  lp->preds.busy--;
  cn_wd_unwatch(lp);                           /* (after an error in a predicate) */
  if (status != LUA_OK) {
    r = ev_failed(L, lp, ev, status);
  } else if (nout == 0) {
    r = EV_FALSE;
  } else {
    *at = (int)lua_tointeger(ev, -nout);
    *nres = nout - 1;
    first = *nres > 0 ? lua_type(ev, -*nres) : LUA_TNIL;
    r = first == LUA_TNIL ? EV_NIL : EV_TRUE;
    if (lua_checkstack(L, nout + 1)) {
      lua_xmove(ev, L, *nres);
    } else {
      lua_pushliteral(L, "cosock.when: a predicate returned too many values");
      r = EV_ERROR;
    }
  }
  if (status == LUA_OK) lua_settop(ev, 0);     /* ready for the next run */
  lua_remove(L, evi);                          /* the evaluator */
  return r;
}
#else
/* (5.1, 5.2, LuaJIT: one resume of the evaluator per predicate, which sees
 * a yield in it.) */
static int eval_run(lua_State *L, cn_loop *lp, int ws, int from, int n, int *at, int *nres) {
  lua_State *ev = push_evaluator(L, lp);
  int i, r = EV_FALSE;
  for (i = from; i < n; i++) {
    if (!still_waits(L, lp, i, ws)) {
      drop(lp, i);
      continue;
    }
    lua_rawgeti(L, ws, PRED_KEY(i));
    cn_wd_watch_for(lp, ev, lp->preds.w[i].slot); /* (a turn of its own) */
    r = call_in(L, lp, ev, nres);              /* values or error above the evaluator */
    cn_wd_unwatch(lp);
    if (r == EV_FALSE || (r == EV_NIL && !lp->preds.w[i].until_nil)) continue;
    *at = i;
    lua_remove(L, -(r == EV_ERROR ? 1 : *nres) - 1); /* the evaluator */
    return r;
  }
  lua_pop(L, 1);
  return EV_FALSE;
}
#endif

/* Once per pass, after the ready list drained (ran: the pass resumed tasks):
 * evaluates every waiting predicate when tasks ran or the interval passed,
 * and makes the tasks whose predicate became true (or raised) ready. An
 * error of a waker goes out (run's recovery keeps the loop usable). */
static void preds_pass(lua_State *L, cn_loop *lp, int ran) {
  int i = -1, n, ws, from;
  double now;
  if (cn_tasks_live(lp) == 0 || lp->preds.live == 0) { /* nobody waits any more */
    forget_all(L, lp);
    lp->preds.evaluated = 0;
    return;
  }
  now = cn_clock_now();
  lp->preds.evaluated = 0;
  /* Due at last + interval, the very sum preds_timeout sleeps to: a
   * difference (now - last) may round below the interval where the clock
   * stands exactly there, and the simulated clock, which moves only by the
   * timeout asked, would then never get past it (issue 35). */
  if (!ran && now < lp->preds.last + lp->preds.interval) return;
  /* Only an evaluation in a pass that ran no task lets the stall check
   * through: a predicate's own side effects may have made an earlier one
   * true, and get one more evaluation first. */
  lp->preds.evaluated = !ran;
  lp->preds.last = now;
  luaL_checkstack(L, 8, NULL);
  cn_push_ref(L, lp->preds.r_ws);
  ws = lua_gettop(L);
  n = lp->preds.n;                             /* waits listed by predicates wait for the next pass */
  for (from = 0; from < n; from = i + 1) {
    int nres = 0, r = eval_run(L, lp, ws, from, n, &i, &nres);
    if (r == EV_FALSE) break;
    if (i < 0) lua_error(L);                   /* the evaluator failed before any predicate ran */
    if (!still_waits(L, lp, i, ws)) {          /* the predicate ended it (a cancel) */
      drop(lp, i);
    } else {
      lua_rawgeti(L, ws, W_KEY(i));            /* values..., w */
      deliver(L, lp, i, ws, lua_gettop(L), r, ws + 1, nres);
    }
    lua_settop(L, ws);
  }
  compact(L, lp, ws);
  lua_settop(L, ws - 1);
}

/* The poll timeout (-1: none) capped by the next evaluation's time. */
static double preds_timeout(cn_loop *lp, double timeout) {
  double left;
  if (lp->preds.live == 0) return timeout;
  left = lp->preds.last + lp->preds.interval - cn_clock_now();
  if (left < 0) left = 0;
  return timeout < 0 || left < timeout ? left : timeout;
}

/* True when predicates wait that were not evaluated in this pass, or were
 * in a pass that ran tasks: the stall check must give them an evaluation in
 * the idle state first. */
static int preds_hold(const cn_loop *lp) {
  return lp->preds.live > 0 && !lp->preds.evaluated;
}

static void preds_at(lua_State *L, cn_loop *lp, int point, cn_task *t) {
  (void)point;
  (void)t;
  preds_pass(L, lp, cn_pass_ran(lp));
}

/* reset(): forgets every predicate wait and restores the default interval. */
static void preds_reset(lua_State *L, cn_loop *lp) {
  forget_all(L, lp);
  lp->preds.interval = DEFAULT_INTERVAL;
  lp->preds.last = 0;
  lp->preds.evaluated = 0;
}

static void preds_free(lua_State *L, cn_loop *lp) {
  cn_mem_free(&lp->mem, lp->preds.w, (size_t)lp->preds.cap * sizeof *lp->preds.w);
  lp->preds.w = NULL;
  lp->preds.n = lp->preds.cap = lp->preds.live = 0;
  cn_unref(L, &lp->preds.r_ws);
  cn_unref(L, &lp->preds.r_ev);
  cn_unref(L, &lp->preds.r_mt);
}

static const cn_hook preds_hook = {
  .name = "predicate", .at = preds_at, .timeout = preds_timeout, .holds = preds_hold,
  .reset = preds_reset, .free = preds_free
};

void cn_preds_init(lua_State *L, cn_loop *lp) {
  cn_hook_add(L, lp, &preds_hook);
  lp->preds.interval = DEFAULT_INTERVAL;
  lua_newtable(L);
  lp->preds.r_ws = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);                       /* a registry slot (a nil would not take one) */
  lp->preds.r_ev = luaL_ref(L, LUA_REGISTRYINDEX);
}

void cn_preds_open(lua_State *L, cn_loop *lp) {
  static const char *const waits[] = {"pred_wait", NULL};
  static const luaL_Reg funcs[] = {
    {"pred_wait", l_pred_wait},
    {"pred_interval", l_pred_interval},
    {NULL, NULL}
  };
  luaL_checkstack(L, 4, NULL);
  lua_createtable(L, 0, 1);                    /* the wait table's metatable */
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, w_setwaker);
  lua_setfield(L, -2, "setwaker");
  lua_setfield(L, -2, "__index");
  lp->preds.r_mt = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
  cn_lift_fields(L, -1, waits);
}
