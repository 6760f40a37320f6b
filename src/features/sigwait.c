/* sigwait: the wait of a cosock.signal waiter, in C.
 *
 * A task in signal.wait parks without the waker protocol: its waiter node (a
 * Lua table in its signal's list) gets a ticket, node.wslot = the task's slot
 * and node.wid = the wait's id, and the loop parks the task with no fd
 * (cn_prepark, cn_park_bare in park.c). A signal wakes it from C through the
 * ticket: no setwaker calls, no waker closure, no record. A ticket whose wait
 * ended (a timeout, a cancel, reset) no longer matches its task: the signal
 * skips that node and does not count it, and cosock/signal.lua drops such
 * nodes from its lists now and then.
 * Where the loop cannot park the task directly (a coroutine whose yields the
 * task forwards), the wait yields ({node}, nil, timeout, INTERNAL) and the
 * loop uses node:setwaker (lua/cosock/signal.lua) as for any other object. */
#include "config.h"

#include <lauxlib.h>

#include "cancel.h"
#include "park.h"
#include "run.h"
#include "sigwait.h"
#include "task.h"

enum { UP_LOOP = 1, UP_WSLOT, UP_WID, UP_COUNT_ };

/* Registry keys: the node each task was last woken through (slot -> node,
 * made on the first wake), and cosock/signal.lua's function that passes a
 * signal on when the task it woke is cancelled before it ran. */
static const char woken_key = 0, passer_key = 0;
#define UP(k) lua_upvalueindex(UP_##k)

/* Sets node[key] = the integer v; the key exists already when the node was
 * made with it (cosock/signal.lua does): then no allocation. */
static void set_int(lua_State *L, int node, int key, lua_Integer v) {
  lua_pushvalue(L, key);
  lua_pushinteger(L, v);
  lua_rawset(L, node);
}

/* The task whose wait the ticket of the node at index node still is, or
 * NULL (no ticket, or its wait ended, timed out included). */
static cn_task *ticket_task(lua_State *L, cn_loop *lp, int node) {
  cn_task *t = NULL;
  int isnum;
  lua_Integer slot, wid;
  lua_pushvalue(L, UP(WSLOT));
  lua_rawget(L, node);
  slot = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (!isnum || slot < 0 || slot >= cn_tasks_slots(lp)) return NULL;
  lua_pushvalue(L, UP(WID));
  lua_rawget(L, node);
  wid = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (isnum && wid > 0) t = cn_task_get(lp, (int)slot);
  if (t == NULL || t->waitid != wid || !t->bare || t->state != T_PARKED || t->timed_out) return NULL;
  return t;
}

/* After the wait: what the loop resumed the task with (nil, nil, "timeout"
 * for a timeout). The ticket is left: it no longer matches. */
static int park_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  if (lua_type(L, -1) == LUA_TSTRING) cn_cancel_point(L, cn_loop_get(L)); /* "timeout" */
  return lua_gettop(L) - 2;
}

/* signal_park(node, timeout) -> the loop's three resume values. Parks the
 * calling task until signal_wake(node) or the timeout (nil: none). */
static int s_park(lua_State *L) {
  CN_RESUMABLE(L);
  cn_loop *lp = cn_loop_get(L);
  int has_timeout;
  double timeout = 0;
  lua_Integer wid;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  has_timeout = !lua_isnil(L, 2);
  if (has_timeout) timeout = luaL_checknumber(L, 2);
  /* No ticket first (these may allocate): from cn_prepark to the yield
   * nothing may raise, or the loop would take a later yield for this one. */
  set_int(L, 1, UP(WSLOT), -1);
  set_int(L, 1, UP(WID), 0);
  {
    cn_tmo tmo;
    tmo.set = (unsigned char)has_timeout;
    tmo.is_int = 0;
    tmo.ival = 0;
    tmo.secs = timeout;
    wid = cn_prepark(L, lp, K_RECV, &tmo, 0);
  }
  if (wid != 0) {
    set_int(L, 1, UP(WSLOT), cn_current_slot(lp));
    set_int(L, 1, UP(WID), wid);
    lua_pushvalue(L, 1);
    return cn_yieldk(L, 1, 0, park_k);
  }
  lua_createtable(L, 1, 0);                    /* recvt */
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  lua_pushnil(L);
  lua_pushvalue(L, 2);
  lua_pushlightuserdata(L, CN_INTERNAL);
  return cn_yieldk(L, 4, 0, park_k);
}

/* signal_wake(node) -> true when the node's ticket is a wait that goes on:
 * the task is made ready; false otherwise (nothing happens). */
static int s_wake(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  luaL_checktype(L, 1, LUA_TTABLE);
  t = ticket_task(L, lp, 1);
  if (t == NULL) {
    lua_pushboolean(L, 0);
    return 1;
  }
  cn_deliver(L, lp, t, 0);
  /* Noted after the wake (this may raise for memory: it then costs the
   * passing on of a cancelled task's signal, never the wake). */
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &woken_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &woken_key);
  }
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, t->slot);
  lua_pushboolean(L, 1);
  return 1;
}

int cn_sigwait_cancelled(lua_State *L, int slot) {
  int top = lua_gettop(L), status = LUA_OK;
  luaL_checkstack(L, 4, NULL);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &woken_key) == LUA_TTABLE &&
      lua_rawgeti(L, -1, slot) == LUA_TTABLE) {
    lua_pushnil(L);
    lua_rawseti(L, top + 1, slot);             /* (an existing key: no allocation) */
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &passer_key) == LUA_TFUNCTION) {
      lua_insert(L, -2);                       /* passer, node */
      status = lua_pcall(L, 1, 0, 0);
      if (status != LUA_OK) {
        lua_replace(L, top + 1);
        lua_settop(L, top + 1);
        return status;
      }
    }
  }
  lua_settop(L, top);
  return status;
}

/* signal_passer(fn): cosock/signal.lua's fn(node), called when a task that a
 * signal woke is cancelled before it ran. */
static int s_passer(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &passer_key);
  return 0;
}

/* signal_ticket(node) -> true while the node's ticket is a wait that goes on. */
static int s_ticket(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushboolean(L, ticket_task(L, cn_loop_get(L), 1) != NULL);
  return 1;
}

void cn_sigwait_open(lua_State *L) {
  static const char *const waits[] = {"signal_park", NULL};
  static const luaL_Reg funcs[] = {
    {"signal_park", s_park},
    {"signal_wake", s_wake},
    {"signal_ticket", s_ticket},
    {"signal_passer", s_passer},
    {NULL, NULL}
  };
  luaL_checkstack(L, UP_COUNT_, NULL);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushliteral(L, "wslot");
  lua_pushliteral(L, "wid");
  luaL_setfuncs(L, funcs, UP_COUNT_ - 1);
  cn_lift_fields(L, -1, waits);
}
