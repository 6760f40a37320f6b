/* metadata: cosock.get_thread_metadata, one table per live thread. */
#include "config.h"

#include <lauxlib.h>

#include "accounting.h"
#include "metadata.h"
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

static void push_one(lua_State *L, cn_loop *lp, cn_task *t) {
  lua_State *co;
  lua_createtable(L, 0, 10);                   /* info */
  cn_task_push_name(L, lp, t->slot);
  lua_setfield(L, -2, "name");
  co = t->co;
  luaL_traceback(L, co, NULL, co == L ? 1 : 0);
  lua_setfield(L, -2, "traceback");
  lua_pushstring(L, co_status(L, co));
  lua_setfield(L, -2, "status");
  lua_pushinteger(L, t->nrecvt);
  lua_setfield(L, -2, "recvt");
  lua_pushinteger(L, t->nsendt);
  lua_setfield(L, -2, "sendt");
  if (t->has_timeout) {
    lua_pushnumber(L, t->timeout);
    lua_setfield(L, -2, "timeout");
  }
  if (t->last_wake >= 0) lua_pushinteger(L, (lua_Integer)t->last_wake);
  else lua_pushliteral(L, "unknown");
  lua_setfield(L, -2, "last_wake");
  cn_acct_push_task(L, lp, t);                 /* resumes, allocated, busy */
}

int cn_get_thread_metadata(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int slot, n = 0;
  lua_createtable(L, cn_tasks_live(lp), 0);
  for (slot = 0; slot < cn_tasks_slots(lp); slot++) {
    cn_task *t = cn_task_get(lp, slot);
    if (t == NULL) continue;
    luaL_checkstack(L, 8, NULL);
    push_one(L, lp, t);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}
