/* run: cosock.run, one pass after another (one_pass, the only place a pass
 * happens), and cosock.step's single pass. A pass: resume what was ready
 * when it began (what they wake runs next pass), stop when nothing is alive
 * and nothing is ready, run the due timers, then wait in the poll for an fd
 * or the next deadline (not at all when something is ready) and wake what
 * waits on the ready fds. All counts are kept as they change, so a pass
 * never visits parked tasks that nothing woke. A task's end (its results,
 * its error and the error handler) is here too. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "compat.h"
#include "hooks.h"
#include "lib/clock.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "waiters.h"
#include "messages.h"

static int is_resumable(lua_State *co) {
  if (lua_status(co) == LUA_YIELD) return 1;
  if (lua_status(co) == LUA_OK) {
    lua_Debug ar;
    return lua_getstack(co, 0, &ar) == 0 && lua_gettop(co) > 0; /* not started */
  }
  return 0;
}

/* A task returned: its results are kept for join, and it is gone. The task
 * is freed before anything that could raise. */
static void task_returned(lua_State *L, cn_loop *lp, cn_task *t, lua_State *co, int n) {
  int base;
  cn_task_push_handle(L, lp, t->slot);         /* handle (nil: nobody can join) */
  base = lua_gettop(L);
  if (lua_isnil(L, base)) n = 0;
  if (!lua_checkstack(L, n + LUA_MINSTACK)) {  /* no room for its results: they cannot be kept */
    lua_settop(co, 0);
    cn_task_free(L, lp, t);
    lua_pushliteral(L, CN_MSG_NO_MEMORY " (keeping a task's results)");
    /* Its joiners see it fail with the error run raises (not wait for ever). */
    cn_hooks_task_end(L, lp, base, CN_ENDED_RAISED, base + 1, 1);
    lua_error(L);
  }
  lua_xmove(co, L, n);
  lua_settop(co, 0);
  cn_task_free(L, lp, t);
  cn_hooks_task_end(L, lp, base, CN_ENDED_RETURNED, base + 1, n);
  lua_settop(L, base - 1);
}

/* A task raised. Its error as run gives it: debug.traceback(co, err) text
 * for a string, number or nil error (then the line the hooks add: which task,
 * spawned where; names.c), the error value itself otherwise; join
 * sees it too. Then the error handler gets it with the task's handle, or,
 * with no handler, run raises it. The task is freed first. */
static void task_raised(lua_State *L, cn_loop *lp, cn_task *t, lua_State *co) {
  int base = lua_gettop(L), type = lua_type(co, -1), site = t->site, line = t->site_line;
  int hooked = t->hooked, how;
  if (!lua_checkstack(L, 8)) {                 /* no room: the task goes all the same */
    cn_task_free(L, lp, t);
    luaL_error(L, CN_MSG_NO_MEMORY);
  }
  cn_task_push_handle(L, lp, t->slot);         /* base+1: handle or nil */
  cn_task_push_name(L, lp, t->slot);           /* base+2 */
  cn_task_push_co(L, t);                       /* base+3: keeps co alive */
  lua_xmove(co, L, 1);                         /* base+4: what it raised */
  cn_task_free(L, lp, t);
  /* (A task a feature hooked, a scope's, may raise a message that has its
   * traceback and task line already: cosock.scope adds them where the
   * error happened, before its own frames. It is kept as it is.) */
  if ((type == LUA_TSTRING || type == LUA_TNUMBER || type == LUA_TNIL) &&
      !(hooked && type == LUA_TSTRING && strstr(lua_tostring(L, base + 4), "\nstack traceback:\n"))) {
    luaL_traceback(L, co, type == LUA_TNIL ? NULL : lua_tostring(L, base + 4), 0);
    cn_hooks_task_line(L, lp, base + 2, site, line);
    lua_concat(L, 2);
    lua_replace(L, base + 4);
  }
  lua_settop(co, 0);
  if (hooked && (how = cn_hooks_task_raised(L, lp, base + 4)) != 0) {
    /* A feature has the error (a scope's task: its scope), join sees it; no handler. */
    cn_hooks_task_end(L, lp, base + 1, how, base + 4, how == CN_ENDED_CANCELLED ? 0 : 1);
    lua_settop(L, base);
    return;
  }
  cn_hooks_task_end(L, lp, base + 1, CN_ENDED_RAISED, base + 4, 1);
  cn_push_ref(L, lp->run.r_errh);              /* base+5 */
  if (!lua_isfunction(L, base + 5)) {
    lua_pushvalue(L, base + 4);
    lua_error(L);
  }
  lua_pushvalue(L, base + 4);                  /* handler, err, handle */
  if (lua_isnil(L, base + 1)) cn_hooks_new_handle(L, lp, base + 2, base + 3); /* dropped: a new one */
  else lua_pushvalue(L, base + 1);
  lua_call(L, 2, 0);                           /* an error of the handler's ends run */
  lua_settop(L, base);
}

/* Resumes one ready task: takes it out of its wait (timer, fds, wakers),
 * resumes it with what its wait gave, then parks what it yielded or ends it.
 * Stack: top + 1 is
 * its record (nil when it has none: a new task, or one that only ever waited
 * bare), then what it yields. */
static void resume_one(lua_State *L, cn_loop *lp, int slot) {
  cn_task *t = cn_task_get(lp, slot);
  lua_State *co = t->co;
  int status, nres, top = lua_gettop(L), timed_out = t->timed_out, bare;
  int lists = !t->internal; /* an INTERNAL wait never got ready lists */
  cn_at(L, lp, CN_AT_TURN, t);                 /* its turn begins */
  cn_set_current(lp, slot);
  if (t->bare) lua_pushnil(L);
  else cn_task_push_record(L, lp, slot);       /* rec or nil */
  /* Clear its timer and take back its wakers before it runs. */
  cn_unpark(L, lp, t, 0, t->bare ? 0 : top + 1);
  t = cn_task_get(lp, slot);
  if (t == NULL) { /* a setwaker cancelled it */
    cn_set_current(lp, -1);
    cn_at(L, lp, CN_AT_DROPPED, NULL);
    lua_settop(L, top);
    return;
  }
  if (!is_resumable(co)) {                     /* resumed behind the loop's back */
    cn_at(L, lp, CN_AT_DROPPED, NULL);
    lua_settop(L, top);
    cn_set_current(lp, -1);
    cn_task_free(L, lp, t);
    return;
  }
  t->state = T_RUNNING;
  t->last_wake = (long long)time(NULL);
  t->last_pass = lp->run.pass;
  if (!lua_checkstack(co, 3)) luaL_error(L, CN_MSG_NO_MEMORY);
  if (timed_out) {                             /* a timed-out wait has no lists */
    lua_pushnil(co);
    lua_pushnil(co);
    lua_pushliteral(co, CN_MSG_TIMEOUT);
  } else if (!lists || lua_isnil(L, top + 1)) {
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
  cn_set_current_co(lp, co);
  t->resumes++;
  cn_at(L, lp, CN_AT_RESUME, t);
  status = cn_resume(co, L, 3, &nres);         /* nres: values yielded or returned */
  cn_at(L, lp, CN_AT_RESUMED, NULL);
  cn_set_current_co(lp, NULL);
  if (status != LUA_YIELD) cn_at(L, lp, CN_AT_ENDED, t); /* what follows is the loop's */
  bare = cn_prepark_taken(lp, slot);
  /* From here on an error belongs to the yield or to an object, not to a task
   * being resumed: recovery must not drop the task for it. */
  cn_set_current(lp, -1);
  t = cn_task_get(lp, slot);
  if (status == LUA_YIELD) {
    cn_park_begin(lp, slot);                   /* from here an error rolls the wait back */
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
      cn_park(L, lp, slot, top + 2, top + 1);
    }
    if (cn_at_on(lp, CN_AT_PARKED) && (t = cn_task_get(lp, slot)) != NULL)
      cn_at_call(L, lp, CN_AT_PARKED, t);
  } else if (status == LUA_OK) {
    task_returned(L, lp, t, co, nres);
  } else {
    task_raised(L, lp, t, co);
  }
  lua_settop(L, top);
}

/* Every live task waits on something that cannot wake it. */
static int stall(lua_State *L, cn_loop *lp) {
  cn_push_ref(L, lp->run.r_hook);
  if (lua_isfunction(L, -1)) lua_call(L, 0, 0);
  else lua_pop(L, 1);
  /* (cosock.lua adds a line per task: lua/cosock/deadlock.lua) */
  return luaL_error(L, CN_MSG_STALL "\n"
                       "cosock-native: every live task waits on something that nothing can wake "
                       "(no socket, no timeout); the dump above shows what each one waits on "
                       "(the line above is cosock 0.2.0's, kept word for word: a stall is the "
                       "program's tasks waiting for each other or for what was closed, "
                       "doc/deadlock-report.md)");
}

/* Signals (Ctrl-C). lua.c answers SIGINT by setting a hook on the main
 * thread that raises "interrupted!" at its next call or instruction; so do
 * other interpreters and signal libraries. The loop's thread may run no Lua
 * for a long time (a poll, passes of C resumes), so when such a hook is set,
 * at the top of a pass and after a signal ended a poll, the loop calls a
 * Lua function that does nothing: the hook fires there, at a point where
 * no task is being resumed or parked, and its error leaves run as any
 * pass's error does, every task where it was (a later run goes on). */
static void let_hooks_run(lua_State *L, cn_loop *lp) {
  if ((lua_gethookmask(L) & (LUA_MASKCALL | LUA_MASKCOUNT)) == 0) return;
  cn_push_ref(L, lp->run.r_poke);
  lua_call(L, 0, 0);
}

/* The pass, as its phases. Each is inlined into one_pass (forced where the
 * compiler allows), and one_pass into each caller with a constant mode, so
 * that run's pass costs what one function written out would cost. */
#if defined(__GNUC__)
#define PASS_INLINE inline __attribute__((always_inline))
#else
#define PASS_INLINE inline
#endif

/* How a pass may wait. */
typedef enum pass_mode {
  PASS_RUN,    /* cosock.run (and a step without a limit): waits as long as the
                * work needs, and raises the stall where nothing can wake a task */
  PASS_STEP    /* cosock.step with a limit (lp->run.step_cap): waits at most that
                * long and never stalls: code outside the loop may wake the tasks */
} pass_mode;

/* Resumes what was ready when the pass began; what they wake runs next
 * pass. Then the hooks that act once the resumes are done (predicates). */
static PASS_INLINE void resume_ready(lua_State *L, cn_loop *lp) {
  int slot;
  cn_lists_swap(lp);
  while ((slot = cn_at_on(lp, CN_AT_ORDER) ? cn_hooks_next_ready(L, lp) : cn_wake_pop(lp)) >= 0)
    resume_one(L, lp, slot);
  cn_at(L, lp, CN_AT_RESUMES_DONE, NULL);
  if (cn_fd_late(lp)) cn_park_late_recheck(L, lp); /* objects that had no fd yet (park.h) */
  if (cn_park_buffered(lp)) cn_park_buffered_recheck(L, lp); /* sockets with buffered data (park.h) */
}

/* Runs the due timers (none armed: no clock to read) and the deliveries
 * they started. Returns the next deadline (-1: none); *now: the clock read. */
static PASS_INLINE double run_timers(lua_State *L, cn_loop *lp, double *now) {
  double next = -1;
  if (cn_timers_armed(lp) > 0) {
    *now = cn_clock_now();
    /* cn_timers_run stops after a feature's timer came due, so that what
     * it wakes is woken in deadline order among the tasks' timers. */
    while ((next = cn_timers_run(lp, *now)), cn_at_on(lp, CN_AT_TIMERS))
      cn_at_call(L, lp, CN_AT_TIMERS, NULL);
    cn_at(L, lp, CN_AT_TIMED, NULL);
  }
  cn_at(L, lp, CN_AT_DELIVER, NULL);           /* (lookups the resolver's timers ended) */
  return next;
}

/* How long the poll may wait (-1: no limit): not at all when a task is
 * ready, else until the next deadline, as the hooks cap it (predicates) and,
 * stepping, at most the step's limit. */
static PASS_INLINE double poll_timeout(const cn_loop *lp, pass_mode mode, double next, double now) {
  double timeout;
  if (cn_tasks_ready(lp) > 0) timeout = 0;
  else if (next >= 0) timeout = next > now ? next - now : 0;
  else timeout = -1;                           /* (deadlines are capped when armed) */
  if (cn_at_on(lp, CN_AT_TIMEOUT)) timeout = cn_hooks_timeout((cn_loop *)lp, timeout);
  if (mode == PASS_STEP && (timeout < 0 || timeout > lp->run.step_cap)) timeout = lp->run.step_cap;
  return timeout;
}

/* Raises the stall when every live task waits on something nothing can
 * wake: no task ready, no fd polled, no task timer, no hook that may still
 * wake one (a timer object with a waker, predicates not yet evaluated idle),
 * no closed socket (there cosock blocks for ever: so does the loop). A step
 * with a limit sleeps it instead. */
static PASS_INLINE void check_stall(lua_State *L, cn_loop *lp, pass_mode mode) {
  lp->run.blocked_closed = 0;
  if (mode == PASS_RUN && cn_tasks_ready(lp) == 0 && cn_fd_polled(lp) == 0 &&
      cn_task_timers_armed(lp) == 0 && !cn_hooks_hold(lp)) {
    if (!cn_waits_closed(lp)) stall(L, lp);
    lp->run.blocked_closed = 1;                /* (an interrupt's error carries the report: cosock.lua) */
  }
}

/* Waits for an fd or the timeout: the poll, or in its place the hook's
 * sleep (cosock.sim: the virtual clock jumps; to CN_AT_POLL's listeners, a
 * trace, it is a poll that slept that long). Nothing to poll and no wait:
 * nothing to do. */
static PASS_INLINE void wait_for_work(lua_State *L, cn_loop *lp, double timeout) {
  if (timeout == 0 && cn_fd_polled(lp) == 0) return;
  cn_at(L, lp, CN_AT_POLL, NULL);
  if (cn_at_on(lp, CN_AT_SLEEP)) {
    cn_hooks_sleep(L, lp, timeout);
  } else {
    lp->run.polls++;
    if (cn_fd_poll(L, lp, timeout) < 0 && errno != EINTR)
      luaL_error(L, "cosock: polling failed: %s", strerror(errno));
  }
  cn_at(L, lp, CN_AT_POLLED, NULL);            /* (a signal: the next pass waits the time left) */
}

/* One pass of the loop. Returns 0 when nothing is left, 2 when it waited
 * (polled or slept with a timeout other than 0), 1 otherwise. The counts
 * are kept as they change, so a pass never visits a parked task that
 * nothing woke, nor a timer that is not due. */
static PASS_INLINE int one_pass(lua_State *L, cn_loop *lp, pass_mode mode) {
  double now = 0, next, timeout;
  let_hooks_run(L, lp);
  lp->run.pass++;
  lp->run.passes++;
  lp->run.ran = cn_tasks_ready(lp) > 0;
  resume_ready(L, lp);
  cn_fd_apply(lp);                             /* (interest is kept per fd: only what ended this pass) */
  if (cn_tasks_live(lp) == 0 && cn_tasks_ready(lp) == 0) return 0;
  next = run_timers(L, lp, &now);
  timeout = poll_timeout(lp, mode, next, now);
  check_stall(L, lp, mode);
  wait_for_work(L, lp, timeout);
  if (timeout != 0) return 2;
  return 1;
}

static int run_passes(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  while (one_pass(L, lp, PASS_RUN)) {}
  return 0;
}

/* step_pass(cap): one pass for cosock.step; returns whether tasks remain.
 * A negative cap (no limit) is a pass of run's. */
static int step_pass(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  double cap = lua_tonumber(L, 1);
  int more;
  lp->run.step_cap = cap;
  more = cap >= 0 ? one_pass(L, lp, PASS_STEP) : one_pass(L, lp, PASS_RUN);
  /* A step returns after its wait: what that wait ended (a timer that fell
   * due, as well as a ready fd) is made ready now, for the next step to run
   * (run's next pass does this itself, before it could wait again). */
  if (more == 2) {
    double now = 0;
    run_timers(L, lp, &now);
  }
  lua_pushboolean(L, more != 0);
  return 1;
}

/* finish_removed(loop, handle, err): the task-end hooks for a task recover
 * dropped. (Pushed under recover's own pcall: may allocate on 5.1.) */
static int finish_removed(lua_State *L) {
  cn_hooks_task_end(L, (cn_loop *)lua_touserdata(L, 1), 2, CN_ENDED_RAISED, 3, 1);
  return 0;
}

/* After a pass raised: drops the task being resumed or parked (its wait
 * could not be made), puts the tasks the pass did not get to back at the
 * front of the ready list, and keeps the loop usable. */
static void recover(lua_State *L, cn_loop *lp) {
  int err = lua_gettop(L), removed[2], i;
  removed[0] = cn_parking_slot(lp);
  removed[1] = cn_current_slot(lp) != removed[0] ? cn_current_slot(lp) : -1;
  /* Their handles, taken before the tasks go (a stack in trouble may have
   * no room: then their joiners are not told). */
  for (i = 0; i < 2; i++) {
    if (removed[i] >= 0 && cn_task_get(lp, removed[i]) && lua_checkstack(L, 4))
      cn_task_push_handle(L, lp, removed[i]);
    else
      removed[i] = -1;
  }
  cn_rollback_park(L, lp);
  if (cn_current_slot(lp) >= 0) {
    cn_task *t = cn_task_get(lp, cn_current_slot(lp));
    cn_set_current(lp, -1);
    if (t) cn_task_free(L, lp, t);
  }
  cn_wake_requeue(lp);
  cn_fd_apply(lp);
  /* Now the loop is consistent: tell their joiners, without letting a
   * failure there escape (run is still marked running). */
  for (i = 0; i < 2; i++) {
    if (removed[i] < 0) continue;
    lua_pushcfunction(L, finish_removed);
    lua_pushlightuserdata(L, lp);
    lua_pushvalue(L, err + 1 + (removed[0] >= 0 && i == 1));
    lua_pushvalue(L, err);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  lua_settop(L, err);
}

/* The error of a wait that could not be made (cosock's "waker already set"
 * and "non-wakeable socket" texts, raised while a task was being parked)
 * gains a line naming the task and the object: "\n(task 'b' waiting on
 * table: 0x...)"; its first line is cosock's. Errors that name the task
 * already are left alone. Stack: err on top, replaced. */
static void name_wait_error(lua_State *L, cn_loop *lp) {
  int slot = cn_parking_slot(lp), err = lua_gettop(L);
  cn_task *t = cn_task_get(lp, slot);
  const char *e = lua_type(L, err) == LUA_TSTRING ? lua_tostring(L, err) : NULL;
  if (t == NULL || e == NULL || strstr(e, "\n(task ") != NULL ||
      (strstr(e, CN_MSG_WAKER_SET) == NULL && strstr(e, CN_MSG_NON_WAKEABLE) == NULL))
    return;
  luaL_checkstack(L, 6, NULL);
  cn_push_label(L, lp, slot);                  /* err, label */
  /* The setwaker that failed is wait nset's (nset counts those that worked). */
  cn_task_push_record(L, lp, slot);            /* err, label, rec or nil */
  if (cn_parking_nset(lp) < t->nwait && lua_istable(L, -1) &&
      lua_rawgeti(L, -1, R_WAIT + cn_parking_nset(lp)) != LUA_TNIL) {
    cn_push_object_name(L, -1);
    lua_pushfstring(L, "%s\n(task %s waiting on %s)", e, lua_tostring(L, err + 1), lua_tostring(L, -1));
  } else {
    lua_pushfstring(L, "%s\n(task %s)", e, lua_tostring(L, err + 1));
  }
  lua_replace(L, err);
  lua_settop(L, err);
}

/* recover(loop, err) under lua_pcall: made once (lp->run.r_recover; on 5.1
 * and LuaJIT pushing a C function makes an object) and a light userdata, so
 * calling it allocates nothing. recover(loop, err, true) names the task in
 * the error instead (name_wait_error, which may allocate) and returns it. */
static int recover_protected(lua_State *L) {
  if (lua_toboolean(L, 3)) {
    lua_settop(L, 2);
    name_wait_error(L, (cn_loop *)lua_touserdata(L, 1));
    return 1;
  }
  recover(L, (cn_loop *)lua_touserdata(L, 1));
  return 0;
}

/* Calls fn (a pass function of this file, with the loop as upvalue) with
 * the nargs values on top, marked as running, and recovers the loop when it
 * raises; then raises that error. Leaves fn's one result (nret 1) or none. */
static int protected_passes(lua_State *L, cn_loop *lp, lua_CFunction fn, int nargs, int nret) {
  int status, base;
  luaL_checkstack(L, 6, NULL);                 /* (for recovery too) */
  lua_pushvalue(L, LOOP_UPVALUE);
  lua_pushcclosure(L, fn, 1);                  /* may raise: nothing is marked yet */
  lua_insert(L, -1 - nargs);
  base = lua_gettop(L) - nargs - 1;
  lp->run.running = 1;
  cn_set_current(lp, -1);
  cn_set_current_co(lp, NULL);
  cn_park_clear(lp);
  cn_at(L, lp, CN_AT_RUN_BEGIN, NULL);
  status = lua_pcall(L, nargs, nret, 0);
  cn_at(L, lp, CN_AT_RUN_END, NULL);           /* (before recovery may drop the task) */
  if (status != LUA_OK) {                      /* still running: its Lua calls cannot run() */
    /* Protected too: whatever recovery raises, running is cleared below and
     * the pass's error is the one raised. */
    lua_rawgeti(L, LUA_REGISTRYINDEX, lp->run.r_recover);
    lua_pushlightuserdata(L, lp);
    lua_pushvalue(L, base + 1);
    lua_pushboolean(L, 1);                     /* first the error names its task */
    if (lua_pcall(L, 3, 1, 0) == LUA_OK) lua_replace(L, base + 1);
    else lua_pop(L, 1);                        /* (no memory: the error as it was) */
    lua_rawgeti(L, LUA_REGISTRYINDEX, lp->run.r_recover);
    lua_pushlightuserdata(L, lp);
    lua_pushvalue(L, base + 1);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  lp->run.running = 0;
  if (status != LUA_OK) return lua_error(L);
  return nret;
}

int cn_run(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (lp->run.running)
    return luaL_error(L, "cosock.run: the loop is already running (run was called from inside a task)");
  cn_refuse_busy(L, lp, "cosock.run", "run");
  lua_settop(L, 0);
  return protected_passes(L, lp, run_passes, 0, 0);
}

double cn_next_timeout(cn_loop *lp) {
  double t = -1, next;
  if (cn_tasks_ready(lp) > 0) return 0;
  if (cn_tasks_live(lp) == 0) return -1;
  if (cn_at_on(lp, CN_AT_TIMERS) || cn_at_on(lp, CN_AT_DELIVER)) return 0; /* due: deliver */
  next = cn_timers_next(lp);
  if (next >= 0) {
    double now = cn_clock_now();
    t = next > now ? next - now : 0;
  }
  if (cn_at_on(lp, CN_AT_TIMEOUT)) t = cn_hooks_timeout(lp, t);
  return t;
}

int cn_run_step(lua_State *L, cn_loop *lp, double cap) {
  cn_refuse_busy(L, lp, "cosock.step", "step");
  lua_pushnumber(L, cap);
  return protected_passes(L, lp, step_pass, 1, 1);
}

void cn_refuse_busy(lua_State *L, cn_loop *lp, const char *fname, const char *verb) {
  if (lp->run.busy == NULL) return;
  luaL_checkstack(L, 2, NULL);
  cn_push_label(L, lp, lp->run.busy_slot);
  luaL_error(L, "%s: cannot %s inside %s (task %s)", fname, verb, lp->run.busy, lua_tostring(L, -1));
}

/* set_error_handler(fn): with a function, a task's error no longer ends
 * run: fn(err, handle) is called with it and the loop goes on (an error fn
 * raises ends run). nil: errors end run again. reset() clears it. */
static int l_set_error_handler(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (!lua_isnoneornil(L, 1) && lua_type(L, 1) != LUA_TFUNCTION)
    return cn_argerror(L, 1, "set_error_handler", "function or nil expected, got %s",
                      luaL_typename(L, 1));
  lua_settop(L, 1);
  if (lua_isnil(L, 1)) lua_pushboolean(L, 0);  /* a nil would free the registry slot */
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->run.r_errh);
  return 0;
}

void cn_run_reset(lua_State *L, cn_loop *lp) {
  lp->run.passes = lp->run.polls = 0;
  lp->run.blocked_closed = 0;
  lua_pushboolean(L, 0);                       /* none (a nil would free the registry slot) */
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->run.r_errh); /* an existing slot: no allocation */
}

/* set_stall_hook(fn): called (no arguments) just before run raises the
 * "no sockets and no timeout" error; cosock.lua prints its thread dump. */
static int l_set_stall_hook(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  if (lua_isnil(L, 1)) lua_pushboolean(L, 0);  /* a nil would free the registry slot */
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->run.r_hook);
  return 0;
}

/* blocked_on_closed() -> true when the loop is (or last was) blocked for
 * ever on a wait on a closed socket, where it would otherwise have stalled:
 * cosock.lua then adds the deadlock report to the error that ended it. */
static int l_blocked_on_closed(lua_State *L) {
  lua_pushboolean(L, cn_loop_get(L)->run.blocked_closed);
  return 1;
}

void cn_run_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"run", cn_run}, {"set_stall_hook", l_set_stall_hook},
    {"set_error_handler", l_set_error_handler}, {"blocked_on_closed", l_blocked_on_closed},
    {NULL, NULL}
  };
  cn_set_current(lp, -1);
  lua_pushboolean(L, 0);                       /* registry slots (a nil would not take one) */
  lp->run.r_hook = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->run.r_errh = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, recover_protected);
  lp->run.r_recover = luaL_ref(L, LUA_REGISTRYINDEX);
  if (luaL_loadbuffer(L, "", 0, "=(cosock.run)") != LUA_OK) lua_error(L);
  lp->run.r_poke = luaL_ref(L, LUA_REGISTRYINDEX);
  cn_run_reset(L, lp);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}

void cn_run_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->run.r_hook);
  cn_unref(L, &lp->run.r_recover);
  cn_unref(L, &lp->run.r_poke);
  cn_unref(L, &lp->run.r_errh);
}
