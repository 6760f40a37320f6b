/* handle: the thread handle that cosock.spawn returns.
 *
 * As in cosock, a plain Lua table: { name = <the name given to spawn> }, on
 * which a program may keep its own fields, with a metatable whose __index
 * holds is_alive and cancel and whose __tostring names the task; nothing
 * else is in it (pairs(handle) sees only name). A table of this file's maps
 * each handle to its coroutine, weak both ways as cosock's threadhandles, and
 * task.c knows which live task a coroutine is: a handle the program drops
 * is collected and its task runs on; the coroutine of a finished task is
 * collected too, and its handle then reads "dead-thread". A later task in a
 * reused slot has another coroutine, so it is never taken for the handle's. Each loop has its own metatable, whose functions hold
 * that loop: a module loaded again (package.loaded cleared) makes a new loop,
 * and the handles of the old one must keep talking to theirs. */
#include "config.h"

#include <lauxlib.h>

#include "handle.h"
#include "park.h"
#include "run.h"
#include "task.h"

/* Pushes the coroutine of the handle at index 1 (nil after a cancel, once
 * collected, or for any value that is not a handle: as in cosock, whose
 * methods look self up in a table, such a value reads as a dead task). */
static void push_co(lua_State *L, cn_loop *lp) {
  if (lua_isnoneornil(L, 1)) {
    lua_pushnil(L);
    return;
  }
  cn_push_ref(L, lp->r_handle_cos);
  lua_pushvalue(L, 1);
  lua_rawget(L, -2);
  lua_remove(L, -2);
}

/* The live task behind the handle at index 1, or NULL. */
static cn_task *handle_task(lua_State *L, cn_loop *lp) {
  cn_task *t;
  push_co(L, lp);
  t = lua_isnil(L, -1) ? NULL : cn_task_of(L, lp, -1);
  lua_pop(L, 1);
  return t;
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
  cn_push_ref(L, lp->r_handle_cos);            /* handle, cos */
  lua_pushvalue(L, -2);
  lua_pushvalue(L, co);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* handle:is_alive() -> false once the task finished, failed or was cancelled. */
static int h_is_alive(lua_State *L) {
  lua_pushboolean(L, handle_task(L, cn_loop_get(L)) != NULL);
  return 1;
}

/* Removes the task from the loop: it is never resumed again, its timer and fd
 * interest go, and every object it waited on gets setwaker(kind, nil). */
static int h_cancel(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t = handle_task(L, lp);
  int failed;
  if (t == NULL) return 0;
  if (t->slot == cn_current_slot(lp))
    return luaL_error(L, "Attempt to cancel a spawned task from itself");
  if (cn_parking(lp, t->slot))
    return luaL_error(L, "cosock: cannot cancel a task while the loop is parking it");
  if (t->state == T_RUNNING) return 0;         /* being cancelled: a setwaker below cancels again */
  /* Out of every list and not PARKED: no waker and no run started from the
   * setwaker calls of cn_unpark can reach it before it is freed. */
  cn_list_unlink(lp, t);
  t->state = T_RUNNING;
  failed = cn_unpark(L, lp, t, 1, 0);
  cn_task_free(L, lp, t);
  /* As cosock (Lua 5.3): a cancelled handle lets go of its coroutine. */
  cn_push_ref(L, lp->r_handle_cos);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  lua_rawset(L, -3);                           /* an existing key: no allocation */
  lua_pop(L, 1);
  if (failed) return lua_error(L);
  return 0;
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

void cn_handle_open(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"is_alive", h_is_alive}, {"cancel", h_cancel}, {"__tostring", h_tostring}, {NULL, NULL}
  };
  cn_loop *lp = lua_touserdata(L, -1);
  /* One table is the metatable and the method table, as cosock's is. */
  lua_createtable(L, 0, 4);                    /* loop, mt */
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, methods, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "__index");
  lp->r_handle_mt = luaL_ref(L, LUA_REGISTRYINDEX); /* pops mt */
  lua_newtable(L);                             /* handle -> coroutine, weak */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "kv");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lp->r_handle_cos = luaL_ref(L, LUA_REGISTRYINDEX);
}

void cn_handle_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->r_handle_mt);
  cn_unref(L, &lp->r_handle_cos);
}
