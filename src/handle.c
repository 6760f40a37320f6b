/* handle: the thread handle that cosock.spawn returns.
 *
 * A full userdata holding (slot, serial): the serial is unique per spawn, so a
 * handle never mistakes a later task in a reused slot for its own. Its user
 * value is the name. Fields: name; methods: is_alive, cancel; tostring.
 * Each loop has its own handle metatable, whose functions hold that loop: a
 * module loaded again (package.loaded cleared) makes a new loop, and the
 * handles of the old one must keep talking to theirs. */
#include "config.h"

#include <string.h>

#include <lauxlib.h>

#include "compat.h"
#include "loop.h"

#define HANDLE_NAME "cosock.thread_handle"

typedef struct cn_handle {
  int slot;
  uint64_t serial;
} cn_handle;

/* The live task behind the handle at index 1, or NULL. */
static cn_task *handle_task(lua_State *L, cn_loop *lp) {
  cn_handle *h = lua_touserdata(L, 1);
  cn_task *t;
  int ours = 0;
  if (h != NULL && lua_getmetatable(L, 1)) {
    cn_push_ref(L, lp->r_handle_mt);
    ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  if (!ours)
    luaL_argerror(L, 1, lua_pushfstring(L, HANDLE_NAME " expected, got %s", luaL_typename(L, 1)));
  t = cn_task_get(lp, h->slot);
  return t && t->serial == h->serial ? t : NULL;
}

void cn_handle_push(lua_State *L, cn_loop *lp, int slot, uint64_t serial, int name) {
  cn_handle *h;
  name = lua_absindex(L, name);
  h = lua_newuserdata(L, sizeof *h);
  h->slot = slot;
  h->serial = serial;
  cn_push_ref(L, lp->r_handle_mt);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, name);
  lua_setuservalue(L, -2);
}

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
  int failed;
  lua_State *co;
  if (t == NULL) return 0;
  if (t->slot == lp->current)
    return luaL_error(L, "Attempt to cancel a spawned task from itself");
  if (t->slot == lp->parking)
    return luaL_error(L, "cosock: cannot cancel a task while the loop is parking it");
  if (t->state == T_RUNNING) return 0;         /* being cancelled: a setwaker below cancels again */
  /* Out of every list and not PARKED: no waker and no run started from the
   * setwaker calls of cn_unpark can reach it before it is freed. */
  cn_list_unlink(lp, t);
  t->state = T_RUNNING;
  cn_push_record(L, lp, t->slot);
  lua_rawgeti(L, -1, R_CO);                    /* rec, co: anchored until it is closed */
  co = lua_tothread(L, -1);
  failed = cn_unpark(L, lp, t, 1, 0);
  cn_task_free(L, lp, t);
  if (cn_close_thread(L, co) != LUA_OK) return lua_error(L);
  if (failed) return lua_error(L);
  return 0;
}

static int h_tostring(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t = handle_task(L, lp);
  lua_getuservalue(L, 1);                      /* name */
  if (lua_type(L, -1) == LUA_TSTRING) return 1;
  if (!lua_isnil(L, -1)) {
    luaL_tolstring(L, -1, NULL);
    return 1;
  }
  if (t == NULL) {
    lua_pushliteral(L, "dead-thread");
    return 1;
  }
  cn_push_record(L, lp, t->slot);
  lua_rawgeti(L, -1, R_CO);
  luaL_tolstring(L, -1, NULL);
  return 1;
}

static int h_index(lua_State *L) {
  const char *key = lua_tostring(L, 2);
  if (key && key[0] == 'n' && lua_type(L, 2) == LUA_TSTRING && strcmp(key, "name") == 0) {
    lua_getuservalue(L, 1);
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

void cn_handle_open(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"is_alive", h_is_alive}, {"cancel", h_cancel}, {NULL, NULL}
  };
  cn_loop *lp = lua_touserdata(L, -1);
  lua_createtable(L, 0, 4);                    /* loop, mt */
  lua_pushliteral(L, HANDLE_NAME);
  lua_setfield(L, -2, "__name");
  lua_newtable(L);
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "methods");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, h_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, h_tostring, 1);
  lua_setfield(L, -2, "__tostring");
  lp->r_handle_mt = luaL_ref(L, LUA_REGISTRYINDEX); /* pops mt */
}
