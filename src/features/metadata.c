/* metadata: cosock.get_thread_metadata, one table per live thread. */
#include "config.h"

#include <lauxlib.h>

#include "accounting.h"
#include "metadata.h"
#include "run.h"
#include "park.h"
#include "task.h"

/* What coroutine.status would say of co, seen from L. */
static const char *co_status(lua_State *L, lua_State *co) {
  lua_Debug ar;
  if (L == co) return "running";
  switch (lua_status(co)) {
    case LUA_YIELD: return "suspended";
    case LUA_OK:
      if (lua_getstack(co, 0, &ar) > 0) return "normal";
      return lua_gettop(co) == 0 ? "dead" : "suspended";
    default: return "dead";
  }
}

/* Each list below allocates as it goes, and any allocation may run a
 * finalizer, which may end a task, spawn one or (outside run) reset the loop.
 * So each reads a task's fields right after making its table, before any
 * call that may run one, and checks the task is still there (cn_task_same)
 * after each such call; a task gone meanwhile is left out. The caller keeps
 * the coroutine on the stack: it is not collected while it is read. */

/* Pushes get_thread_metadata's table of t; 0 when t went meanwhile. */
static int push_one(lua_State *L, cn_loop *lp, cn_task *t) {
  int slot = t->slot, woke;
  lua_State *co = t->co;
  unsigned epoch = cn_tasks_epoch(lp);
  lua_createtable(L, 0, 10);                   /* info */
  if ((t = cn_task_same(lp, slot, co, epoch)) == NULL) return 0;
  /* (no collection runs from here to the name: numbers and known keys) */
  lua_pushinteger(L, t->nrecvt);
  lua_setfield(L, -2, "recvt");
  lua_pushinteger(L, t->nsendt);
  lua_setfield(L, -2, "sendt");
  if (t->tmo != CN_TMO_NONE) {
    cn_push_wait_timeout(L, t);
    lua_setfield(L, -2, "timeout");
  }
  woke = t->last_wake >= 0;
  if (woke) lua_pushinteger(L, (lua_Integer)t->last_wake);
  else lua_pushnil(L);                         /* (its word below) */
  lua_setfield(L, -2, "last_wake");
  cn_acct_push_task(L, lp, t);                 /* resumes, allocated, busy */
  cn_task_push_name(L, lp, slot);
  lua_setfield(L, -2, "name");
  if (!woke) {
    lua_pushliteral(L, "unknown");
    lua_setfield(L, -2, "last_wake");
  }
  luaL_traceback(L, co, NULL, co == L ? 1 : 0);
  lua_setfield(L, -2, "traceback");
  lua_pushstring(L, co_status(L, co));
  lua_setfield(L, -2, "status");
  return cn_task_same(lp, slot, co, epoch) != NULL;
}

/* Pushes a list with push(t) of every live task, in slot order. */
static int list_tasks(lua_State *L, int (*push)(lua_State *, cn_loop *, cn_task *)) {
  cn_loop *lp = cn_loop_get(L);
  int slot, n = 0;
  lua_createtable(L, cn_tasks_live(lp), 0);
  for (slot = 0; slot < cn_tasks_slots(lp); slot++) {
    cn_task *t = cn_task_get(lp, slot);
    if (t == NULL) continue;
    luaL_checkstack(L, 10, NULL);
    cn_task_push_co(L, t);                     /* (kept: read while it is listed) */
    if (push(L, lp, t)) {
      lua_rawseti(L, -3, ++n);
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);                           /* gone meanwhile: left out */
    }
  }
  return 1;
}

int cn_get_thread_metadata(lua_State *L) {
  return list_tasks(L, push_one);
}

/* Pushes the list of what t waits on: { {kind = "recvr"|"sendr", obj = ...}, ... }.
 * A wait through the waker protocol keeps its objects in the task's record;
 * a direct wait (a project wrapper or channel receive in the task's own
 * coroutine) keeps none, and its object is the first argument of the C
 * function the coroutine is suspended in. Those t waits on as it is called
 * (one gone meanwhile: as far as it got). */
void cn_push_task_waits(lua_State *L, cn_loop *lp, cn_task *t) {
  int i, rec, slot = t->slot, nwait = t->nwait, bare = t->bare;
  unsigned char kind0 = nwait > 0 ? t->waits[0].kind : 0;
  lua_State *co = t->co;
  unsigned epoch = cn_tasks_epoch(lp);
  lua_createtable(L, nwait, 0);
  if (bare) {
    lua_Debug ar;
    if (nwait > 0 && cn_task_same(lp, slot, co, epoch) != NULL && lua_checkstack(co, 2) &&
        lua_getstack(co, CN_WAIT_LEVEL, &ar) && lua_getlocal(co, &ar, CN_WAIT_LOCAL) != NULL) {
      lua_xmove(co, L, 1);                     /* waits, obj */
      lua_createtable(L, 0, 2);
      lua_insert(L, -2);
      lua_setfield(L, -2, "obj");
      lua_pushstring(L, cn_kind_name(kind0));
      lua_setfield(L, -2, "kind");
      lua_rawseti(L, -2, 1);
    }
    return;
  }
  cn_task_push_record(L, lp, slot);
  rec = lua_gettop(L);
  for (i = 0; lua_istable(L, rec); i++) {
    unsigned char kind;
    if ((t = cn_task_same(lp, slot, co, epoch)) == NULL || i >= t->nwait) break;
    kind = t->waits[i].kind;
    lua_createtable(L, 0, 2);
    lua_rawgeti(L, rec, R_WAIT + i);
    lua_setfield(L, -2, "obj");
    lua_pushstring(L, cn_kind_name(kind));
    lua_setfield(L, -2, "kind");
    lua_rawseti(L, rec - 1, i + 1);
  }
  lua_settop(L, rec - 1);
}

/* thread_states() -> one {co = coroutine, woken = boolean, info = <as in
 * get_thread_metadata>, waits = <see cn_push_task_waits>, handle = <its handle, if
 * the program still has it>} per live task: woken when
 * the last pass resumed it. For the stall dump, which prints them as cosock
 * 0.2.0 does, and the report after the stall's first line. */
static int push_state(lua_State *L, cn_loop *lp, cn_task *t) {
  int slot = t->slot;
  lua_State *co = t->co;
  unsigned epoch = cn_tasks_epoch(lp);
  lua_createtable(L, 0, 5);
  if ((t = cn_task_same(lp, slot, co, epoch)) == NULL) return 0;
  lua_pushvalue(L, -2);                        /* (the coroutine, kept by the caller) */
  lua_setfield(L, -2, "co");
  lua_pushboolean(L, cn_woken_last_pass(lp, t));
  lua_setfield(L, -2, "woken");
  cn_task_push_handle(L, lp, slot);            /* nil once the program dropped it */
  lua_setfield(L, -2, "handle");
  if (!push_one(L, lp, t)) return 0;
  lua_setfield(L, -2, "info");
  if ((t = cn_task_same(lp, slot, co, epoch)) == NULL) return 0;
  cn_push_task_waits(L, lp, t);
  lua_setfield(L, -2, "waits");
  return cn_task_same(lp, slot, co, epoch) != NULL;
}

int cn_thread_states(lua_State *L) {
  return list_tasks(L, push_state);
}
