/* loop: cosock.run, one pass after another, in the order of the spec's
 * outline (seeds/001, "Run Loop"): drain the ready list and resume each task,
 * stop when nothing is alive and nothing is ready, run due timers, poll (with
 * timeout 0 when something is ready), and _wake the objects whose fds are
 * ready. All counts are kept as they change, so a pass never visits parked
 * tasks that nothing woke. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "clock.h"
#include "loop.h"

static int is_resumable(lua_State *co) {
  if (lua_status(co) == LUA_YIELD) return 1;
  if (lua_status(co) == LUA_OK) {
    lua_Debug ar;
    return lua_getstack(co, 0, &ar) == 0 && lua_gettop(co) > 0; /* not started */
  }
  return 0;
}

/* Raises the error of a task that died: debug.traceback(co, err) text for a
 * string, number or nil error, the error value itself otherwise. */
static int raise_task_error(lua_State *L, cn_loop *lp, cn_task *t, lua_State *co) {
  int type = lua_type(co, -1);
  if (type == LUA_TSTRING || type == LUA_TNUMBER) {
    luaL_traceback(L, co, lua_tostring(co, -1), 0);
  } else if (type == LUA_TNIL) {
    luaL_traceback(L, co, NULL, 0);
  } else {
    lua_xmove(co, L, 1);
  }
  lua_settop(co, 0);
  cn_task_free(L, lp, t);
  return lua_error(L);
}

/* Steps 4.1.1 - 4.1.5 of the outline for one ready task. Stack: top + 1 is
 * its record (nil for a bare wait, which needs none), then what it yields. */
static void resume_one(lua_State *L, cn_loop *lp, int slot) {
  cn_task *t = lp->slots[slot];
  lua_State *co = t->co;
  int status, nres, top = lua_gettop(L), timed_out = t->timed_out, bare;
  int lists = !t->internal; /* an INTERNAL wait never got ready lists */
  lp->current = slot;
  if (t->bare) lua_pushnil(L);
  else cn_push_record(L, lp, slot);            /* rec */
  /* Clear its timer and take back its wakers before it runs. */
  cn_unpark(L, lp, t, 0, t->bare ? 0 : top + 1);
  t = cn_task_get(lp, slot);
  if (t == NULL) { lp->current = -1; lua_settop(L, top); return; } /* a setwaker cancelled it */
  if (!is_resumable(co)) {                     /* resumed behind the loop's back */
    lua_settop(L, top);
    lp->current = -1;
    cn_task_free(L, lp, t);
    return;
  }
  t->state = T_RUNNING;
  t->last_wake = (long long)time(NULL);
  t->timed_out = 0;
  if (!lua_checkstack(co, 3)) luaL_error(L, "cosock: out of memory");
  if (timed_out) {                             /* a timed-out wait has no lists */
    lua_pushnil(co);
    lua_pushnil(co);
    lua_pushliteral(co, "timeout");
  } else if (!lists) {
    lua_pushnil(co);
    lua_pushnil(co);
    lua_pushnil(co);
  } else {
    int kind;
    for (kind = K_RECV; kind <= K_SEND; kind++) {
      if (lua_rawgeti(L, top + 1, R_RECVR + kind) != LUA_TNIL) {
        lua_pushnil(L);
        lua_rawseti(L, top + 1, R_RECVR + kind);
      }
    }
    lua_pushnil(L);
    lua_xmove(L, co, 3);
  }
  lp->current_co = co;
  status = lua_resume(co, L, 3);
  lp->current_co = NULL;
  bare = lp->pre.slot == slot;
  lp->pre.slot = -1;
  /* From here on an error belongs to the yield or to an object, not to a task
   * being resumed: recovery must not drop the task for it. */
  lp->current = -1;
  t = lp->slots[slot];
  if (status == LUA_YIELD) {
    nres = lua_gettop(co);
    luaL_checkstack(L, 6, NULL);
    if (bare && nres == 1) {                   /* cn_prepark: the wrapper alone */
      lua_xmove(co, L, 1);
      cn_park_bare(L, lp, slot, top + 2);
    } else {
      if (nres > 4) lua_pop(co, nres - 4);
      if (lua_isnil(L, top + 1)) {
        cn_push_record(L, lp, slot);
        lua_replace(L, top + 1);
      }
      lua_xmove(co, L, nres < 4 ? nres : 4);
      lua_settop(L, top + 1 + 4);              /* rec, recvt, sendt, timeout, mark */
      lua_settop(co, 0);
      cn_park(L, lp, slot, top + 2, top + 1);
    }
  } else if (status == LUA_OK) {
    lua_settop(co, 0);
    cn_task_free(L, lp, t);
  } else {
    raise_task_error(L, lp, t, co);
  }
  lua_settop(L, top);
}

/* Step 9: every timer whose deadline passed wakes its task with "timeout".
 * A node left queued by an ended wait is dropped; one whose task waits again
 * with a later deadline moves there (see cn_timer_arm). */
static void run_timers(cn_loop *lp, double now) {
  th_node *n;
  while ((n = th_top(&lp->timers)) != NULL && n->when <= now) {
    cn_task *t = (cn_task *)n; /* the node is the first member of the task */
    if (t->armed && (n->when != t->deadline || n->seq != t->dseq)) {
      /* re-armed in place: to its real key first, so that a late pass
       * still fires due timers in deadline order */
      th_move(&lp->timers, n, t->deadline, t->dseq);
      continue;
    }
    th_remove(&lp->timers, n);
    if (t->armed && t->state == T_PARKED) {
      t->timed_out = 1;
      cn_make_ready(lp, t);
    }
    cn_timer_disarm(lp, t);
  }
}

/* Step 11: every live task waits on something that cannot wake it. */
static int stall(lua_State *L, cn_loop *lp) {
  cn_push_ref(L, lp->r_hook);
  if (lua_isfunction(L, -1)) lua_call(L, 0, 0);
  else lua_pop(L, 1);
  return luaL_error(L, "cosock tried to call socket.select with no sockets and no timeout. "
                       "this is a bug, please report it, including the above dump state\n"
                       "cosock-native: every live task waits on something that nothing can wake "
                       "(no socket, no timeout); the dump above shows what each one waits on");
}

static int run_passes(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  for (;;) {
    double timeout, now;
    cn_event *ev;
    int n, slot;
    th_node *next;
    /* Steps 1-4: what is ready now runs now; what it wakes runs next pass. */
    lp->ready = lp->ready == L_A ? L_B : L_A;
    while ((slot = cn_list_pop(lp, lp->ready == L_A ? L_B : L_A)) >= 0)
      resume_one(L, lp, slot);
    /* Steps 5-7, with counts instead of a scan of every thread. */
    if (lp->live == 0 && lp->lists[lp->ready].n == 0) break;
    /* Step 8: interest is kept per fd; only drop what ended this pass. */
    cn_fd_apply(lp);
    /* Steps 9-10 (no armed timer: no clock to read). The top may be due
     * earlier than any armed deadline: the loop then wakes once for nothing. */
    next = NULL;
    if (lp->narmed > 0) {
      now = cn_clock_now();
      run_timers(lp, now);
      if (lp->narmed > 0) next = th_top(&lp->timers);
    }
    if (lp->lists[lp->ready].n > 0) timeout = 0;
    else if (next) timeout = next->when > now ? next->when - now : 0;
    else timeout = -1;                         /* (deadlines are capped when armed) */
    /* Step 11. */
    if (timeout < 0 && lp->poller.nfds == 0) stall(L, lp);
    /* Steps 12-15. */
    if (timeout == 0 && lp->poller.nfds == 0) continue; /* nothing to poll, no wait */
    n = cn_poller_wait(&lp->poller, timeout, &ev);
    if (n < 0) return luaL_error(L, "cosock: polling failed: %s", strerror(errno));
    cn_fd_dispatch(L, lp, ev, n);
  }
  cn_fd_apply(lp);
  return 0;
}

/* Puts the tasks a failed pass did not get to back at the front of the ready
 * list, drops a task whose wait could not be made, and keeps the loop usable. */
static void recover(lua_State *L, cn_loop *lp) {
  unsigned char wake = lp->ready == L_A ? L_B : L_A;
  int slot;
  if (lp->parking >= 0) cn_rollback_park(L, lp);
  if (lp->current >= 0) {
    cn_task *t = cn_task_get(lp, lp->current);
    lp->current = -1;
    if (t) cn_task_free(L, lp, t);
  }
  /* Keep their order: they were ready before anything woken this pass. */
  while ((slot = lp->lists[wake].tail) >= 0) {
    cn_task *t = lp->slots[slot];
    cn_list_unlink(lp, t);
    t->list = lp->ready;
    t->prev = -1;
    t->next = lp->lists[lp->ready].head;
    if (t->next >= 0) lp->slots[t->next]->prev = slot;
    else lp->lists[lp->ready].tail = slot;
    lp->lists[lp->ready].head = slot;
    lp->lists[lp->ready].n++;
  }
  cn_fd_apply(lp);
}

int cn_run(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int status;
  if (lp->running)
    return luaL_error(L, "cosock.run: the loop is already running (run was called from inside a task)");
  lua_settop(L, 0);
  lp->running = 1;
  lp->current = lp->parking = lp->pre.slot = -1;
  lp->current_co = NULL;
  lua_pushvalue(L, LOOP_UPVALUE);
  lua_pushcclosure(L, run_passes, 1);
  status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK) recover(L, lp);        /* still running: its Lua calls cannot run() */
  lp->running = 0;
  if (status != LUA_OK) return lua_error(L);
  return 0;
}
