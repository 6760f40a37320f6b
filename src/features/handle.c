/* handle: the thread handle that cosock.spawn returns.
 *
 * As in cosock, a plain Lua table: { name = <the name given to spawn> }, on
 * which a program may keep its own fields, with a metatable whose __index
 * holds is_alive and cancel and whose __tostring names the task; nothing
 * else is in it (pairs(handle) sees only name). A table of this file's maps
 * each handle to its task's slot while the task lives, then (cn_handle_map)
 * to its coroutine, weak both ways as cosock's threadhandles: a handle the
 * program drops is collected and its task runs on; the coroutine of a
 * finished task is collected too, and its handle then reads "dead-thread". A
 * later task in a reused slot has another handle (task.c's handles array
 * says which), so it is never taken for the handle's.
 *
 * Join: when a task ends, cn_handle_finish keeps its outcome for its handle
 * (in a table with weak keys: a finished task nobody can join any more
 * costs nothing once its handle is collected) and wakes what waits on the
 * handle. A handle speaks the waker protocol for "recvr" (readable once the
 * task ended) with any number of waiters; join is a wait on it like any
 * other. The handle's fields stay the program's: all of this lives in this
 * file's tables.
 *
 * Each loop has its own metatable, whose functions hold that loop: a module
 * loaded again (package.loaded cleared) makes a new loop, and the handles of
 * the old one must keep talking to theirs. */
#include "config.h"

#include <limits.h>

#include <string.h>

#include <lauxlib.h>

#include "compat.h"
#include "hooks.h"
#include "handle.h"
#include "sigwait.h"
#include "lib/clock.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "messages.h"

/* The live task behind the handle at index idx, or NULL: the slot it maps
 * to, if that slot's task still has this handle. */
cn_task *cn_handle_task(lua_State *L, cn_loop *lp, int idx) {
  cn_task *t = NULL;
  int isnum;
  lua_Integer slot;
  if (lua_isnoneornil(L, idx)) return NULL;
  idx = lua_absindex(L, idx);
  cn_push_ref(L, lp->r_handle_cos);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  slot = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 2);
  if (isnum && slot >= 0 && slot < cn_tasks_slots(lp)) {
    cn_task_push_handle(L, lp, (int)slot);
    if (lua_rawequal(L, -1, idx)) t = cn_task_get(lp, (int)slot);
    lua_pop(L, 1);
  }
  return t;
}

/* The live task behind the handle at index 1, or NULL. */
static cn_task *handle_task(lua_State *L, cn_loop *lp) { return cn_handle_task(L, lp, 1); }

/* Pushes the coroutine of the handle at index 1 (nil after a cancel, once
 * collected, or for any value that is not a handle: as in cosock, whose
 * methods look self up in a table, such a value reads as a dead task). */
static void push_co(lua_State *L, cn_loop *lp) {
  cn_task *t = handle_task(L, lp);
  if (t != NULL) {
    cn_task_push_co(L, t);
    return;
  }
  if (lua_isnoneornil(L, 1)) {
    lua_pushnil(L);
    return;
  }
  cn_push_ref(L, lp->r_handle_cos);            /* an ended task's: its coroutine */
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (!lua_isthread(L, -1)) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
}

void cn_handle_push(lua_State *L, cn_loop *lp, int name, int co) {
  name = lua_absindex(L, name);
  co = lua_absindex(L, co);
  luaL_checkstack(L, 4, NULL);
  lua_createtable(L, 0, 1);                    /* handle */
  lua_pushvalue(L, name);
  lua_setfield(L, -2, "name");
  cn_push_ref(L, lp->r_handle_mt);
  lua_setmetatable(L, -2);
  cn_push_ref(L, lp->r_handle_cos);            /* handle, map */
  lua_pushvalue(L, -2);
  lua_pushvalue(L, co);
  lua_rawset(L, -3);                           /* the key: may raise, nothing is taken yet */
  lua_pop(L, 1);
}

void cn_handle_map(lua_State *L, cn_loop *lp, int handle, int v) {
  handle = lua_absindex(L, handle);
  v = lua_absindex(L, v);
  cn_push_ref(L, lp->r_handle_cos);
  lua_pushvalue(L, handle);
  lua_pushvalue(L, v);
  lua_rawset(L, -3);                           /* an existing key (set by spawn): no allocation */
  lua_pop(L, 1);
}

/* handle:is_alive() -> false once the task finished, failed or was cancelled. */
static int h_is_alive(lua_State *L) {
  lua_pushboolean(L, handle_task(L, cn_loop_get(L)) != NULL);
  return 1;
}

/* Removes the task from the loop: it is never resumed again, its timer and fd
 * interest go, and every object it waited on gets setwaker(kind, nil). On Lua
 * 5.4 its coroutine is then closed (compat.h): an error from a __close is
 * raised here, after the task is gone, in place of any setwaker error. */
static int h_cancel(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t = handle_task(L, lp);
  int failed, slot;
  lua_State *co;
  cn_busy was;
  if (t == NULL) return 0;
  if (t->slot == cn_current_slot(lp))
    return luaL_error(L, "Attempt to cancel a spawned task from itself");
  if (cn_parking(lp, t->slot))
    return luaL_error(L, "cosock: cannot cancel a task while the loop is parking it");
  if (t->hooked && cn_hooks_cancel(lp, t)) return 0; /* a scope's task: its cleanup runs */
  if (t->state == T_RUNNING) return 0;         /* being cancelled: a setwaker below cancels again */
  luaL_checkstack(L, 8, NULL);                 /* (cn_unpark's, before the task is marked) */
  /* Out of every list and not PARKED: no waker and no run started from the
   * setwaker calls of cn_unpark can reach it before it is freed. */
  cn_list_unlink(lp, t);
  t->state = T_RUNNING;
  /* The setwaker calls are protected, and nothing else in cn_unpark raises:
   * the busy mark (no reset, no run while t is half cancelled) is always
   * taken off again. */
  was = cn_busy_begin(lp, "the setwaker calls of handle:cancel()", t->slot);
  failed = cn_unpark(L, lp, t, 1, 0);          /* its first error at 2 when failed */
  cn_busy_end(lp, was);
  cn_task_push_co(L, t);                       /* anchored until it is closed */
  co = lua_tothread(L, -1);
  slot = t->slot;
  cn_task_free(L, lp, t);
  /* As cosock (Lua 5.3): a cancelled handle lets go of its coroutine. */
  cn_push_ref(L, lp->r_handle_cos);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  lua_rawset(L, -3);                           /* an existing key: no allocation */
  lua_pop(L, 1);
  cn_handle_finish(L, lp, 1, CN_ENDED_CANCELLED, 1, 0); /* (keeps the stack) */
  if (cn_close_thread(L, co) != LUA_OK) return lua_error(L);
  if (cn_sigwait_cancelled(L, slot) != LUA_OK) return lua_error(L);
  if (failed) {
    lua_settop(L, 2);                          /* the first setwaker error */
    return lua_error(L);
  }
  return 0;
}

/* handle_is_self(handle) -> whether it is the handle of the task that is
 * running now (cosock.lua raises cancel's error for that case, so that it
 * carries cosock.lua's position as cosock's does). */
int cn_handle_is_self(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t = handle_task(L, lp);
  lua_pushboolean(L, t != NULL && t->slot == cn_current_slot(lp));
  return 1;
}

/* tostring(handle), as cosock words it: a string name as it is, another
 * true name through tostring, else the coroutine until it is collected (or
 * the task cancelled), then "dead-thread". The name is read as cosock reads
 * it (handle.name), so a program that renames its handle sees the new name. */
static int h_tostring(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_settop(L, 1);
  lua_getfield(L, 1, "name");
  if (lua_type(L, 2) == LUA_TSTRING) return 1;
  if (lua_toboolean(L, 2)) {
    luaL_tolstring(L, 2, NULL);
    return 1;
  }
  push_co(L, lp);
  if (lua_isnil(L, -1)) lua_pushliteral(L, "dead-thread");
  else luaL_tolstring(L, -1, NULL);
  return 1;
}

/* ---- outcomes and waiters ---------------------------------------------------
 * results[handle] = { how, n = count, values... } once the task ended (how:
 * true returned, false raised), or, with no values to keep, the plain value
 * true (returned nothing) or "cancelled": the common endings make no table.
 * waiters[handle] = { waker... } while it runs. Both tables have weak keys. */

/* True when the value at idx is one of this loop's handles. */
static int is_handle(lua_State *L, cn_loop *lp, int idx) {
  int ours = 0;
  if (lua_type(L, idx) == LUA_TTABLE && lua_getmetatable(L, idx)) {
    cn_push_ref(L, lp->r_handle_mt);
    ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return ours;
}

/* Pushes t[key] of the table in registry[ref], key at index key. */
static int push_keyed(lua_State *L, int ref, int key) {
  key = lua_absindex(L, key);
  cn_push_ref(L, ref);
  lua_pushvalue(L, key);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  return lua_type(L, -1);
}

/* Pushes the values of the outcome at idx as join returns them. */
static int push_outcome(lua_State *L, int idx) {
  lua_Integer i, n;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TBOOLEAN) {      /* returned nothing */
    lua_pushboolean(L, 1);
    return 1;
  }
  if (lua_type(L, idx) == LUA_TSTRING) {       /* "cancelled" */
    lua_pushnil(L);
    lua_pushvalue(L, idx);
    return 2;
  }
  lua_rawgeti(L, idx, 1);                      /* how */
  lua_getfield(L, idx, "n");
  n = lua_tointeger(L, -1);
  lua_pop(L, 1);
  luaL_checkstack(L, (int)(n > 0 ? n : 0) + 1, "too many results to join");
  for (i = 1; i <= n; i++) lua_rawgeti(L, idx, i + 1);
  return (int)n + 1;
}

void cn_handle_finish(lua_State *L, cn_loop *lp, int handle, int how, int first, int n) {
  int i, top = lua_gettop(L), waiters, err = 0;
  handle = lua_absindex(L, handle);
  first = lua_absindex(L, first);
  if (!lua_istable(L, handle)) return;         /* dropped: nobody can ask */
  luaL_checkstack(L, 6, NULL);
  if (how == CN_ENDED_CANCELLED) {             /* outcome (a cancel keeps no values) */
    lua_pushliteral(L, "cancelled");
  } else if (how == CN_ENDED_RETURNED && n == 0) {
    lua_pushboolean(L, 1);
  } else {
    lua_createtable(L, n + 1, 1);
    lua_pushboolean(L, how == CN_ENDED_RETURNED);
    lua_rawseti(L, -2, 1);
    for (i = 0; i < n; i++) {
      lua_pushvalue(L, first + i);
      lua_rawseti(L, -2, i + 2);
    }
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "n");
  }
  cn_push_ref(L, lp->r_handle_results);        /* outcome, results */
  lua_pushvalue(L, handle);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
  /* The waiters, taken off first: each waker calls setwaker(nil) back. No
   * handle has a list: none to look up. */
  if (lp->handle_lists > 0 && push_keyed(L, lp->r_handle_waiters, handle) == LUA_TTABLE) {
    if (lp->handle_lists < INT_MAX) lp->handle_lists--; /* (at INT_MAX it stays: see h_setwaker) */
    waiters = lua_gettop(L);
    cn_push_ref(L, lp->r_handle_waiters);
    lua_pushvalue(L, handle);
    lua_pushnil(L);
    lua_rawset(L, -3);                         /* an existing key: no allocation */
    lua_pop(L, 1);
    /* Each is called even when one raised (memory, the watchdog's
     * interrupt, a waker of the program's): the first error is raised
     * once all are woken. */
    unsigned char was = cn_cause_set(lp, CN_CAUSE_JOIN); /* (a trace's wake cause) */
    for (i = 1; lua_rawgeti(L, waiters, i) != LUA_TNIL; i++) {
      if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        if (err == 0) err = lua_gettop(L);
        else lua_pop(L, 1);
      }
    }
    cn_cause_set(lp, was);
    lua_pop(L, 1);
    if (err != 0) {
      lua_pushvalue(L, err);
      lua_error(L);
    }
  }
  lua_settop(L, top);
}

/* handle:setwaker("recvr", fn): the waker protocol. Any number of tasks may
 * wait; fn is called once the task ended (at once when it has). nil: the
 * loop takes a waiter back; the loop's stale wakers are dropped then. */
static int h_setwaker(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  const char *kind = lua_tostring(L, 2);
  lua_settop(L, 3);
  if (kind == NULL || kind[0] != 'r' || lua_type(L, 2) != LUA_TSTRING || strcmp(kind, "recvr") != 0)
    return cn_wake_kind_error(L, 2);
  if (!is_handle(L, lp, 1))
    return luaL_error(L, "bad self to 'setwaker' (thread handle expected, got %s)", luaL_typename(L, 1));
  if (lua_isnil(L, 3)) {
    int i, j = 1;
    if (push_keyed(L, lp->r_handle_waiters, 1) != LUA_TTABLE) return 0;
    for (i = 1; lua_rawgeti(L, 4, i) != LUA_TNIL; i++) {
      if (!cn_waker_stale(L, lp, -1)) lua_rawseti(L, 4, j++);
      else lua_pop(L, 1);
    }
    lua_pop(L, 1);
    for (; j < i; j++) {                       /* clear the tail that moved down */
      lua_pushnil(L);
      lua_rawseti(L, 4, j);
    }
    return 0;
  }
  luaL_checktype(L, 3, LUA_TFUNCTION);
  if (handle_task(L, lp) == NULL) {            /* ended: ready at once */
    lua_pushvalue(L, 3);
    lua_call(L, 0, 0);
    return 0;
  }
  if (push_keyed(L, lp->r_handle_waiters, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    cn_push_ref(L, lp->r_handle_waiters);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    /* Counted up to INT_MAX, then kept there: a list whose handle was
     * collected first is never taken back, so the count can only be high. */
    if (lp->handle_lists < INT_MAX) lp->handle_lists++;
  }
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  return 0;
}

/* ---- join -------------------------------------------------------------------
 * Stack while it waits: 1 handle, 2 timeout, 3 deadline, 4 {handle}. */
static int join_k(lua_State *L, int status, lua_KContext ctx);

static int join_wait(lua_State *L) {
  cn_what_set(cn_loop_get(L), CN_WHAT_JOIN);   /* (for a trace: what it waits on) */
  lua_settop(L, 4);
  lua_pushvalue(L, 4);
  lua_pushnil(L);
  if (lua_isnil(L, 3)) {
    lua_pushnil(L);
  } else {
    double left = lua_tonumber(L, 3) - cn_clock_now();
    lua_pushnumber(L, left > 0 ? left : 0);
  }
  return cn_yieldk(L, 3, 0, join_k);
}

static int join_k(lua_State *L, int status, lua_KContext ctx) {
  cn_loop *lp = cn_loop_get(L);
  int timed_out = lua_gettop(L) >= 7 && cn_resumed_timeout(L, 7);
  (void)status;
  (void)ctx;
  lua_settop(L, 4);
  if (push_keyed(L, lp->r_handle_results, 1) != LUA_TNIL) return push_outcome(L, -1);
  lua_pop(L, 1);
  if (handle_task(L, lp) == NULL) {            /* forgotten (a reset): as cancelled */
    lua_pushnil(L);
    lua_pushliteral(L, "cancelled");
    return 2;
  }
  if (cn_wait_end(L, lp, timed_out || (!lua_isnil(L, 3) && lua_tonumber(L, 3) <= cn_clock_now()))) {
    lua_pushnil(L);
    lua_pushliteral(L, CN_MSG_TIMEOUT);
    return 2;
  }
  return join_wait(L);
}

/* handle:join([timeout]) -> true, ... | false, err | nil, "cancelled" | nil,
 * "timeout": waits, in a task, for the handle's task to end. */
static int h_join(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  CN_RESUMABLE(L);
  lua_settop(L, 2);
  if (!is_handle(L, lp, 1))
    return luaL_error(L, "bad self to 'join' (thread handle expected, got %s)", luaL_typename(L, 1));
  if (!lua_isnil(L, 2)) {
    int isnum;
    double timeout = lua_tonumberx(L, 2, &isnum);
    /* Named here: a method reached through pcall or a field would be '?'. */
    if (!isnum)
      return cn_argerror(L, 1, "join", "number or nil expected, got %s",
                        luaL_typename(L, 2));
    if (timeout != timeout) return cn_argerror(L, 1, "join", "timeout is NaN");
    lua_pushnumber(L, cn_clock_now() + (timeout > 0 ? timeout : 0));
  } else {
    lua_pushnil(L);                            /* deadline */
  }
  if (!cn_running(lp) || !cn_isyieldable(L))
    return luaL_error(L, "cosock: join must be called from a task");
  if (push_keyed(L, lp->r_handle_results, 1) != LUA_TNIL) return push_outcome(L, -1);
  lua_pop(L, 1);
  t = handle_task(L, lp);
  if (t == NULL) {                             /* forgotten (a reset): as cancelled */
    lua_pushnil(L);
    lua_pushliteral(L, "cancelled");
    return 2;
  }
  if (t->co == L || t->slot == cn_current_slot(lp))
    return luaL_error(L, "cosock: a task cannot join itself");
  lua_createtable(L, 1, 0);                    /* {handle}: the recvt of the wait */
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  return join_wait(L);
}

/* A new table with weak keys, in the registry; returns its reference. */
static int new_weak_keys(lua_State *L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  return luaL_ref(L, LUA_REGISTRYINDEX);
}

static void handle_free(lua_State *L, cn_loop *lp);
static const cn_hook handle_hook = {
  .name = "handle", .task_end = cn_handle_finish, .new_handle = cn_handle_push,
  .handle_map = cn_handle_map,
  .free = handle_free
};

void cn_handle_open(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"is_alive", h_is_alive}, {"cancel", h_cancel}, {"__tostring", h_tostring},
    {"join", h_join}, {"setwaker", h_setwaker}, {NULL, NULL}
  };
  static const char *const waits[] = {"join", NULL};
  cn_loop *lp = lua_touserdata(L, -1);
  cn_hook_add(L, lp, &handle_hook);
  /* One table is the metatable and the method table, as cosock's is. */
  lua_createtable(L, 0, 4);                    /* loop, mt */
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, methods, 1);
  cn_lift_fields(L, -1, waits);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "__index");
  lp->r_handle_mt = luaL_ref(L, LUA_REGISTRYINDEX); /* pops mt */
  lua_newtable(L);                             /* handle -> slot or coroutine, weak */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "kv");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lp->r_handle_cos = luaL_ref(L, LUA_REGISTRYINDEX);
  lp->r_handle_results = new_weak_keys(L);
  lp->r_handle_waiters = new_weak_keys(L);
}

static void handle_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->r_handle_mt);
  cn_unref(L, &lp->r_handle_cos);
  cn_unref(L, &lp->r_handle_results);
  cn_unref(L, &lp->r_handle_waiters);
}
