/* run: cosock.run, one pass after another, in the order of the spec's
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

#include "lib/clock.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "timer_object.h"
#include "waiters.h"

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
  cn_task *t = cn_task_get(lp, slot);
  lua_State *co = t->co;
  int status, nres, top = lua_gettop(L), timed_out = t->timed_out, bare;
  int lists = !t->internal; /* an INTERNAL wait never got ready lists */
  lp->run.current = slot;
  if (t->bare) lua_pushnil(L);
  else cn_push_record(L, lp, slot);            /* rec */
  /* Clear its timer and take back its wakers before it runs. */
  cn_unpark(L, lp, t, 0, t->bare ? 0 : top + 1);
  t = cn_task_get(lp, slot);
  if (t == NULL) { lp->run.current = -1; lua_settop(L, top); return; } /* a setwaker cancelled it */
  if (!is_resumable(co)) {                     /* resumed behind the loop's back */
    lua_settop(L, top);
    lp->run.current = -1;
    cn_task_free(L, lp, t);
    return;
  }
  t->state = T_RUNNING;
  t->last_wake = (long long)time(NULL);
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
  lp->run.current_co = co;
  status = lua_resume(co, L, 3);
  lp->run.current_co = NULL;
  bare = cn_prepark_taken(lp, slot);
  /* From here on an error belongs to the yield or to an object, not to a task
   * being resumed: recovery must not drop the task for it. */
  lp->run.current = -1;
  t = cn_task_get(lp, slot);
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

/* Step 11: every live task waits on something that cannot wake it. */
static int stall(lua_State *L, cn_loop *lp) {
  cn_push_ref(L, lp->run.r_hook);
  if (lua_isfunction(L, -1)) lua_call(L, 0, 0);
  else lua_pop(L, 1);
  return luaL_error(L, "cosock tried to call socket.select with no sockets and no timeout: "
                       "every live task waits on something that nothing can wake "
                       "(the thread dump above shows what each one waits on)");
}

static int run_passes(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  for (;;) {
    double timeout, now = 0, next;
    int slot;
    /* Steps 1-4: what is ready now runs now; what it wakes runs next pass. */
    cn_lists_swap(lp);
    while ((slot = cn_wake_pop(lp)) >= 0) resume_one(L, lp, slot);
    /* Steps 5-7, with counts instead of a scan of every thread. */
    if (cn_tasks_live(lp) == 0 && cn_tasks_ready(lp) == 0) break;
    /* Step 8: interest is kept per fd; only drop what ended this pass. */
    cn_fd_apply(lp);
    /* Steps 9-10 (no armed timer: no clock to read). */
    next = -1;
    if (cn_timers_armed(lp) > 0) next = cn_timers_run(lp, now = cn_clock_now());
    if (cn_tobj_due(lp)) {                     /* timer objects came due: wake their waiters */
      cn_tobj_deliver(L, lp);
      next = now;                              /* (a waker may arm timers: look again at once) */
    }
    if (cn_tasks_ready(lp) > 0) timeout = 0;
    else if (next >= 0) timeout = next > now ? next - now : 0;
    else timeout = -1;                         /* (deadlines are capped when armed) */
    /* Step 11 (a timer object that nobody waits on wakes nobody). */
    if (cn_tasks_ready(lp) == 0 && cn_fd_polled(lp) == 0 && cn_task_timers_armed(lp) == 0 &&
        !cn_tobj_waited(lp))
      stall(L, lp);
    /* Steps 12-15. */
    if (timeout == 0 && cn_fd_polled(lp) == 0) continue; /* nothing to poll, no wait */
    if (cn_fd_poll(L, lp, timeout) < 0)
      return luaL_error(L, "cosock: polling failed: %s", strerror(errno));
  }
  cn_fd_apply(lp);
  return 0;
}

/* Puts the tasks a failed pass did not get to back at the front of the ready
 * list, drops a task whose wait could not be made, and keeps the loop usable. */
static void recover(lua_State *L, cn_loop *lp) {
  cn_rollback_park(L, lp);
  if (lp->run.current >= 0) {
    cn_task *t = cn_task_get(lp, lp->run.current);
    lp->run.current = -1;
    if (t) cn_task_free(L, lp, t);
  }
  cn_wake_requeue(lp);
  cn_fd_apply(lp);
}

int cn_run(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int status;
  if (lp->run.running)
    return luaL_error(L, "cosock.run: the loop is already running (run was called from inside a task)");
  lua_settop(L, 0);
  lp->run.running = 1;
  lp->run.current = -1;
  lp->run.current_co = NULL;
  cn_park_clear(lp);
  lua_pushvalue(L, LOOP_UPVALUE);
  lua_pushcclosure(L, run_passes, 1);
  status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK) recover(L, lp);        /* still running: its Lua calls cannot run() */
  lp->run.running = 0;
  if (status != LUA_OK) return lua_error(L);
  return 0;
}

/* set_stall_hook(fn): called (no arguments) just before run raises the
 * "no sockets and no timeout" error; cosock.lua prints its thread dump. */
static int l_set_stall_hook(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->run.r_hook);
  return 0;
}

void cn_run_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"run", cn_run}, {"set_stall_hook", l_set_stall_hook}, {NULL, NULL}
  };
  lp->run.current = -1;
  lua_pushboolean(L, 0);
  lp->run.r_hook = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}

void cn_run_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->run.r_hook);
}
