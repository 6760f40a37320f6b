/* core: the Lua module cosock.core. Creates the one loop of this Lua state
 * and exports spawn, run, reset, get_thread_metadata and a few test hooks.
 * Every function gets the loop (a full userdata) as upvalue 1. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "clock.h"
#include "loop.h"

#define LOOP_MT "cosock.loop"

cn_loop *cn_loop_get(lua_State *L) {
  return (cn_loop *)lua_touserdata(L, LOOP_UPVALUE);
}

void cn_push_ref(lua_State *L, int ref) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
}

/* Pushes new tasks, fdsets and inner tables (may raise: nothing changes). */
static void push_tables(lua_State *L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_newtable(L);                             /* weak values: see fdset.c */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
}

/* Anchors the three tables push_tables left on top in the loop's registry
 * slots, which exist already: this allocates nothing and cannot fail. */
static void store_tables(lua_State *L, cn_loop *lp) {
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->r_inner);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->r_fdsets);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->r_tasks);
}

/* (Re)creates the Lua tables the loop anchors its values in. */
static void new_tables(lua_State *L, cn_loop *lp) {
  push_tables(L);
  store_tables(L, lp);
}

static void init_lists(cn_loop *lp) {
  memset(lp->lists, 0, sizeof lp->lists);
  lp->lists[L_A].head = lp->lists[L_A].tail = -1;
  lp->lists[L_B].head = lp->lists[L_B].tail = -1;
  lp->ready = L_A;
}

/* cosock.spawn(fn, name) -> handle */
static int l_spawn(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_State *co;
  int slot;
  /* Named here: luaL_checktype would name it after however it was reached. */
  if (lua_type(L, 1) != LUA_TFUNCTION)
    return luaL_error(L, "bad argument #1 to 'spawn' (function expected, got %s)",
                      luaL_typename(L, 1));
  lua_settop(L, 2);
  /* Everything Lua must allocate comes first: an error here changes nothing. */
  co = lua_newthread(L);                       /* fn, name, co */
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_createtable(L, R_WAIT, 0);               /* fn, name, co, rec */
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, R_CO);
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, R_NAME);
  slot = cn_task_reserve(L, lp);
  cn_handle_push(L, lp, slot, lp->serials + 1, 2); /* fn, name, co, rec, handle */
  cn_push_ref(L, lp->r_tasks);
  lua_pushvalue(L, 4);
  lua_rawseti(L, -2, slot);                    /* may raise: nothing is committed yet */
  lua_pop(L, 1);
  cn_task_new(lp)->co = co;                    /* cannot fail */
  return 1;
}

/* cosock.reset(): forgets every task, timer and fd. */
static int l_reset(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (lp->running)
    return luaL_error(L, "cosock.reset: cannot reset while the loop is running");
  /* The new tables and poller first: when either cannot be made, nothing
   * is forgotten (old tables kept with new counts would wake stale objects). */
  push_tables(L);
  if (cn_fd_reset(lp, lp->backend0) != 0)
    return luaL_error(L, "cosock.reset: cannot create the poller: %s", strerror(errno));
  cn_free_all(lp);
  init_lists(lp);
  store_tables(L, lp);
  return 0;
}

/* stats() -> {tasks, ready, timers, fds, backend}: live tasks, tasks ready for
 * the next pass, armed timers, fds some task waits on, the poller in use. For
 * tests (nothing left behind) and benchmarks. */
static int l_stats(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, lp->live);
  lua_setfield(L, -2, "tasks");
  lua_pushinteger(L, lp->lists[lp->ready].n);
  lua_setfield(L, -2, "ready");
  lua_pushinteger(L, lp->narmed);
  lua_setfield(L, -2, "timers");
  lua_pushinteger(L, lp->nwaitfds);
  lua_setfield(L, -2, "fds");
  lua_pushstring(L, lp->poller.backend->name);
  lua_setfield(L, -2, "backend");
  return 1;
}

/* set_stall_hook(fn): called (no arguments) just before run raises the
 * "no sockets and no timeout" error; cosock.lua prints its thread dump. */
static int l_set_stall_hook(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->r_hook);
  return 0;
}

/* set_backend(name): polls with "select" or "epoll" from now on. */
static int l_set_backend(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  const char *name = luaL_checkstring(L, 1);
  const cn_backend *b = cn_backend_named(name);
  if (b == NULL) return luaL_argerror(L, 1, lua_pushfstring(L, "unknown poller backend '%s'", name));
  if (cn_poller_switch(&lp->poller, b) != 0)
    return luaL_error(L, "cosock: cannot switch to the %s poller: %s", name, strerror(errno));
  lp->backend0 = b; /* reset keeps it */
  return 0;
}

/* register_native(mt): objects with this metatable are the project's own
 * socket wrappers. The loop waits on them without the waker protocol's Lua
 * calls (setwaker, _wake): it reads their inner_sock's fd and wakes the task
 * itself. Such a wrapper must call closing(fd) before closing its socket. */
static int l_register_native(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  int i;
  for (i = 0; i < lp->nnatmt; i++)
    if (lp->natmt[i] == lua_topointer(L, 1)) return 0;
  if (lp->nnatmt == CN_MAX_NATIVE)
    return luaL_error(L, "cosock: too many native wrapper classes (at most %d)", CN_MAX_NATIVE);
  cn_push_ref(L, lp->r_natives);               /* keeps the metatable, and its address, alive */
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lp->natmt[lp->nnatmt++] = lua_topointer(L, 1);
  return 0;
}

/* closing(fd): fd is about to be closed; tasks waiting on it are woken. */
static int l_closing(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_Integer fd = luaL_checkinteger(L, 1);
  if (fd >= 0 && fd < lp->nfd) cn_fd_closing(L, lp, (int)fd);
  return 0;
}

/* wake(obj, kind) -> boolean: obj:_wake(kind) for a native wrapper, which
 * has no waker of the loop's to call: wakes the task the loop parked on it,
 * once per wait. */
static int l_wake(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  static const char *const kinds[] = {"recvr", "sendr", NULL};
  int kind = luaL_checkoption(L, 2, NULL, kinds), key, isnum;
  lua_Integer fd;
  cn_task *t;
  lua_settop(L, 2);
  if (lua_getfield(L, 1, "inner_sock") == LUA_TNIL || lua_getfield(L, 3, "getfd") == LUA_TNIL)
    return lua_pushboolean(L, 0), 1;
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  fd = lua_tointegerx(L, -1, &isnum);
  if (!isnum || fd < 0 || fd >= lp->nfd) return lua_pushboolean(L, 0), 1;
  key = (int)fd * 2 + kind;
  t = lp->natslot[key] ? cn_task_get(lp, lp->natslot[key] - 1) : NULL;
  if (t == NULL || t->waits[lp->natwait[key]].fired) return lua_pushboolean(L, 0), 1;
  if (t->waits[lp->natwait[key]].obj != lua_topointer(L, 1))
    return lua_pushboolean(L, 0), 1;           /* another wrapper on that fd */
  cn_deliver(L, lp, t, lp->natwait[key]);
  lua_pushboolean(L, 1);
  return 1;
}

/* monotime() -> seconds on the loop's monotonic clock (for call deadlines). */
static int l_monotime(lua_State *L) {
  lua_pushnumber(L, cn_clock_now());
  return 1;
}

static int loop_gc(lua_State *L) {
  cn_loop *lp = luaL_checkudata(L, 1, LOOP_MT);
  cn_free_all(lp);
  cn_fd_free(lp);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_tasks);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_fdsets);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_inner);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_natives);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_hook);
  luaL_unref(L, LUA_REGISTRYINDEX, lp->r_handle_mt);
  return 0;
}

int luaopen_cosock_core(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"spawn", l_spawn},
    {"run", cn_run},
    {"reset", l_reset},
    {"get_thread_metadata", cn_get_thread_metadata},
    {"stats", l_stats},
    {"set_stall_hook", l_set_stall_hook},
    {"set_backend", l_set_backend},
    {"monotime", l_monotime},
    {"register_native", l_register_native},
    {"closing", l_closing},
    {"wake", l_wake},
    {NULL, NULL}
  };
  const char *env = getenv("COSOCK_POLLER");
  const cn_backend *b = env && *env ? cn_backend_named(env) : cn_backend_default();
  cn_loop *lp;
  if (b == NULL) return luaL_error(L, "cosock: COSOCK_POLLER names an unknown poller '%s'", env);
  lp = lua_newuserdata(L, sizeof *lp);         /* loop */
  memset(lp, 0, sizeof *lp);
  /* No reference yet: __gc of a loop whose creation failed unrefs nothing
   * (luaL_unref of 0 would clobber the registry's free list). */
  lp->r_tasks = lp->r_fdsets = lp->r_inner = lp->r_natives = lp->r_hook = LUA_NOREF;
  lp->r_handle_mt = LUA_NOREF;
  cn_mem_init(&lp->mem, L);
  lp->backend0 = b;
  lp->current = lp->parking = lp->pre.slot = -1;
  init_lists(lp);
  th_init(&lp->timers);
  luaL_newmetatable(L, LOOP_MT);
  lua_pushcfunction(L, loop_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  /* Registry slots for the loop's tables (luaL_ref of nil would not take one). */
  lua_pushboolean(L, 0);
  lp->r_tasks = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->r_fdsets = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->r_inner = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_newtable(L);                             /* metatable -> true, kept across resets */
  lp->r_natives = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->r_hook = luaL_ref(L, LUA_REGISTRYINDEX);
  new_tables(L, lp);
  if (cn_poller_init(&lp->poller, b) != 0)
    return luaL_error(L, "cosock: cannot create the %s poller: %s", b->name, strerror(errno));
  cn_handle_open(L);                           /* uses the loop at -1 */
  luaL_newlibtable(L, funcs);                  /* loop, module */
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, funcs, 1);
  cn_wrapper_open(L);
  cn_chanwait_open(L);
  lua_pushliteral(L, PACKAGE_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushlightuserdata(L, CN_INTERNAL);
  lua_setfield(L, -2, "INTERNAL");
  return 1;
}
