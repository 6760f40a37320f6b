/* chanwait: the wait of cosock.channel's receive, in C.
 *
 * A receive that finds the queue empty parks its task without the waker
 * protocol: it leaves a ticket in the channel's link table (link.waker =
 * true, link.wslot the task's slot, link.wid the wait's id) and the loop
 * parks the task with no fd (cn_prepark, cn_park_bare in park.c). The channel's wake
 * (on send and close) sees the true waker and makes that task ready from C
 * through the ticket: a send with nobody waiting still reads one field. A
 * ticket whose wait has ended (timed out, cancelled) no longer matches its
 * task and does nothing; the wait itself takes its ticket off when it ends
 * without a wake (a timeout).
 * Where the loop cannot park the task directly (a coroutine whose yields the
 * task forwards), the receive yields what cosock's does, ({rx}, nil, timeout),
 * and the loop uses rx:setwaker as for any other object. One waiter per
 * channel either way: a ticket in use and a waker set exclude each other. */
#include "config.h"

#include <lauxlib.h>

#include "chanwait.h"
#include "park.h"
#include "run.h"
#include "task.h"

enum { UP_LOOP = 1, UP_WSLOT, UP_WID, UP_WAKER, UP_RECVT, UP_COUNT_ };
#define UP(k) lua_upvalueindex(UP_##k)

/* The task that the ticket in the link at index link still belongs to, or
 * NULL. Leaves the stack as it was. */
static cn_task *ticket_task(lua_State *L, cn_loop *lp, int link) {
  cn_task *t = NULL;
  int isnum;
  lua_Integer slot, wid;
  lua_pushvalue(L, UP(WSLOT));
  lua_rawget(L, link);
  slot = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (!isnum || slot < 0 || slot >= cn_tasks_slots(lp)) return NULL;
  lua_pushvalue(L, UP(WID));
  lua_rawget(L, link);
  wid = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  if (isnum) t = cn_task_get(lp, (int)slot);
  if (t == NULL || t->waitid != wid || !t->bare || t->state != T_PARKED) return NULL;
  return t;
}

/* True when someone waits on the link at index link: a waker function (a
 * task in select) or a ticket whose task still waits. */
static int link_busy(lua_State *L, cn_loop *lp, int link) {
  int busy;
  lua_pushvalue(L, UP(WAKER));
  busy = lua_rawget(L, link) != LUA_TNIL &&
         (lua_type(L, -1) != LUA_TBOOLEAN || ticket_task(L, lp, link) != NULL);
  lua_pop(L, 1);
  return busy;
}

/* After a wait: a ticket still on the link that is this wait's (ctx: its id;
 * the wait timed out) is taken off, so the link shows no waiter. A wake has
 * already taken the true waker off. */
static int wait_k(lua_State *L, int status, lua_KContext ctx) {
  int n = lua_gettop(L) - 3;                   /* what the loop resumed it with */
  (void)status;
  if (ctx != 0) {
    lua_pushvalue(L, UP(WID));
    if (lua_rawget(L, 2) == LUA_TNUMBER && lua_tointeger(L, -1) == (lua_Integer)ctx) {
      lua_pushvalue(L, UP(WSLOT));
      lua_pushnil(L);
      lua_rawset(L, 2);
      lua_pushvalue(L, UP(WAKER));
      if (lua_rawget(L, 2) == LUA_TBOOLEAN) {
        lua_pushvalue(L, UP(WAKER));
        lua_pushnil(L);
        lua_rawset(L, 2);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return n;
}

/* channel_wait(rx, link, timeout) -> the loop's three resume values (the
 * third is "timeout" when the timeout ended the wait). */
static int c_wait(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int busy;
  cn_tmo tmo;
  lua_Integer wid = 0;
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 3);
  tmo.set = 0;
  if (!lua_isnil(L, 3)) {
    luaL_checknumber(L, 3);
    tmo = cn_tmo_of(L, 3);
  }
  /* When someone waits already, the usual tuple below makes the loop call
   * setwaker, which raises cosock's error for a second waiter, from the loop. */
  busy = link_busy(L, lp, 2);
  if (!busy) {
    /* The ticket's fields get values that make no ticket (wslot -1) before
     * cn_prepark: setting them afterwards then only replaces values, which
     * allocates nothing, so no error can come between cn_prepark and the
     * yield (the loop would take a later yield for the one it announced). */
    lua_pushvalue(L, UP(WSLOT));
    lua_pushinteger(L, -1);
    lua_rawset(L, 2);
    lua_pushvalue(L, UP(WID));
    lua_pushinteger(L, 0);
    lua_rawset(L, 2);
    lua_pushvalue(L, UP(WAKER));
    lua_pushboolean(L, 1);
    lua_rawset(L, 2);
  }
  if (!busy && (wid = cn_prepark(L, lp, K_RECV, &tmo, 0)) != 0) {
    lua_pushvalue(L, UP(WAKER));
    lua_pushboolean(L, 1);
    lua_rawset(L, 2);
    lua_pushvalue(L, UP(WSLOT));
    lua_pushinteger(L, cn_current_slot(lp));
    lua_rawset(L, 2);
    lua_pushvalue(L, UP(WID));
    lua_pushinteger(L, wid);
    lua_rawset(L, 2);
    lua_pushvalue(L, 1);
    return lua_yieldk(L, 1, (lua_KContext)wid, wait_k);
  }
  /* What cosock's receive yields: ({rx}, nil, timeout as given). */
  lua_pushvalue(L, UP(RECVT));                 /* rx._recvt: {rx}, made by channel.new */
  lua_rawget(L, 1);
  lua_pushnil(L);
  lua_pushvalue(L, 3);
  return lua_yieldk(L, 3, 0, wait_k);
}

/* channel_wake(link) -> true when it made the task of the link's ticket
 * ready (the caller has taken the true waker off the link). */
static int c_wake(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  luaL_checktype(L, 1, LUA_TTABLE);
  t = ticket_task(L, lp, 1);
  if (t != NULL) cn_deliver(L, lp, t, 0);
  lua_pushboolean(L, t != NULL);
  return 1;
}

/* channel_waiting(link) -> true while someone waits on the link (see link_busy). */
static int c_waiting(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushboolean(L, link_busy(L, cn_loop_get(L), 1));
  return 1;
}

void cn_chanwait_open(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"channel_wait", c_wait},
    {"channel_wake", c_wake},
    {"channel_waiting", c_waiting},
    {NULL, NULL}
  };
  luaL_checkstack(L, UP_COUNT_, NULL);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushliteral(L, "wslot");
  lua_pushliteral(L, "wid");
  lua_pushliteral(L, "waker");
  lua_pushliteral(L, "_recvt");
  luaL_setfuncs(L, funcs, UP_COUNT_ - 1);
}
