/* core: the Lua module cosock.core, and the one file that names every layer
 * (doc/architecture.md). Creates the one loop of this Lua state, exports
 * spawn, reset, stats and monotime, and has the core (src/loop/) and each
 * feature (src/features/) add their own functions; a feature attaches its
 * hook (hooks.h) at load. The functions of a feature the loop itself does
 * not need (channels, socket wrappers, timer objects, name lookups,
 * predicates, signals) are added when its Lua module first loads (open): a
 * program pays in Lua heap only for what it uses. Every function gets the
 * loop (a full userdata) as upvalue 1. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "feature_list.h"
#include "lib/clock.h"
#include "loop_core.h"
#include "messages.h"

#define LOOP_MT "cosock.loop"

/* cosock.spawn(fn, name) -> handle */
static int l_spawn(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_State *co;
  cn_task *t;
  int site, line, guess;
  /* Named here: luaL_checktype would name it after however it was reached. */
  if (lua_type(L, 1) != LUA_TFUNCTION)
    return cn_argerror(L, 1, "spawn", "function expected, got %s",
                      luaL_typename(L, 1));
  lua_settop(L, 2);
  /* Everything Lua must allocate comes first: an error here changes nothing. */
  site = cn_site_here(L, lp, &line);
  co = lua_newthread(L);                       /* fn, name, co */
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  /* The handle maps to the slot the task will most likely take: cn_task_new
   * maps it again only when a finalizer took that one meanwhile. */
  guess = cn_task_next_slot(lp);
  lua_pushinteger(L, guess);                   /* fn, name, co, guess */
  cn_handle_push(L, lp, 2, 4);                 /* fn, name, co, guess, handle */
  t = cn_task_new(L, lp, 3, 2, 5, guess);      /* may raise before taking a slot */
  t->site = site;
  t->site_line = line;
  cn_at(L, lp, CN_AT_SPAWN, t);                /* (a trace: its spawn event) */
  return 1;
}

/* cosock.reset(): forgets every task, timer and fd; timer objects made
 * before it act as cancelled. A reset that fails
 * (no memory, no fd for a new poller) changes nothing. */
static int l_reset(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (cn_running(lp))
    return luaL_error(L, "cosock.reset: cannot reset while the loop is running");
  cn_refuse_busy(L, lp, "cosock.reset", "reset");
  lua_settop(L, 0);
  cn_tasks_new_tables(L);                      /* 1-3; may raise: nothing changed */
  if (cn_waiters_reset(L, lp) != 0)
    return luaL_error(L, "cosock.reset: cannot create the poller: %s", strerror(errno));
  cn_tasks_reset(L, lp, 1);                    /* cannot fail */
  cn_run_reset(L, lp);
  cn_hooks_reset(L, lp);                       /* the features (hooks.h); cannot fail */
  return 0;
}

/* stats() -> {tasks, ready, parked, timers, fds, backend, passes, polls,
 * busy}: live tasks, tasks to resume without waiting (the rest of this pass
 * and the next), parked tasks, armed timers, fds some task waits on, the
 * poller in use, and accounting.c's totals (cosock.stats is this). For
 * tests (nothing left behind), benchmarks and programs. */
static int l_stats(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_createtable(L, 0, 9);
  lua_pushinteger(L, cn_tasks_live(lp));
  lua_setfield(L, -2, "tasks");
  lua_pushinteger(L, cn_tasks_runnable(lp));
  lua_setfield(L, -2, "ready");
  lua_pushinteger(L, cn_timers_armed(lp));
  lua_setfield(L, -2, "timers");
  lua_pushinteger(L, cn_fd_waited(lp));
  lua_setfield(L, -2, "fds");
  lua_pushstring(L, cn_fd_backend(lp));
  lua_setfield(L, -2, "backend");
  cn_acct_push_stats(L, lp);                   /* parked, passes, polls, busy */
  return 1;
}

/* monotime() -> seconds on the loop's monotonic clock (for call deadlines). */
static int l_monotime(lua_State *L) {
  lua_pushnumber(L, cn_clock_now() - cn_clock_offset()); /* (a simulation's clock below 1) */
  return 1;
}

static void open_channel(lua_State *L, cn_loop *lp) {
  (void)lp;
  cn_channel_open(L);
  cn_channel_op_open(L);
}
static void open_socket(lua_State *L, cn_loop *lp) { cn_wrapper_open(L, lp); }
static void open_signal(lua_State *L, cn_loop *lp) {
  (void)lp;
  cn_sigwait_open(L);
  cn_wakers_open(L);
}

/* The features open can add, in the order of the bits of loop->opened. */
static const struct {
  const char *name;
  void (*open)(lua_State *L, cn_loop *lp);     /* loop, module on top: adds to module */
} features[] = {
  {"channel", open_channel},                   /* cosock.channel */
  {"socket", open_socket},                     /* cosock.socket.wrap */
  {"timer", cn_tobj_open},                     /* cosock.timer, cosock.op */
  {"dns", cn_dns_open},                        /* cosock.dns, cosock.socket.resolve */
  {"when", cn_preds_open},                     /* cosock.when */
  {"signal", open_signal},                     /* cosock.signal */
  {"sim", cn_sim_open},                        /* cosock.sim */
  {"trace", cn_trace_open},                    /* cosock.trace */
  {"tasks", cn_taskrec_open},                  /* cosock.tasks */
};

/* open(name): adds the functions of feature name to this module, once
 * (upvalue 2 is the module). A failure (no memory) adds it again next time. */
static int l_open(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  const char *name = luaL_checkstring(L, 1);
  unsigned i;
  for (i = 0; i < sizeof features / sizeof features[0]; i++) {
    if (strcmp(name, features[i].name) != 0) continue;
    if (lp->opened & (1u << i)) return 0;
    lua_settop(L, 0);
    lua_pushvalue(L, LOOP_UPVALUE);
    lua_pushvalue(L, lua_upvalueindex(2));
    features[i].open(L, lp);
    lp->opened |= 1u << i;
    return 0;
  }
  return luaL_error(L, "cosock.core.open: no feature named '%s'", name);
}

static int loop_gc(lua_State *L) {
  cn_loop *lp = luaL_checkudata(L, 1, LOOP_MT);
  cn_hooks_free(L, lp);                        /* first: the resolver unwatches its fds, unqueues its timers */
  cn_tasks_free(L, lp);
  cn_waiters_free(L, lp);
  cn_park_free(L, lp);
  cn_run_free(L, lp);
  return 0;
}

int luaopen_cosock_core(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"spawn", l_spawn},
    {"reset", l_reset},
    {"get_thread_metadata", cn_get_thread_metadata},
    {"thread_states", cn_thread_states},
    {"handle_is_self", cn_handle_is_self},
    {"current_task", cn_current_task},
    {"stats", l_stats},
    {"monotime", l_monotime},
    {"ossignal_open", cn_ossignal_open},
    {NULL, NULL}
  };
  const char *env = getenv("COSOCK_POLLER");
  const cn_backend *b = env && *env ? cn_backend_named(env) : cn_backend_default();
  cn_loop *lp;
  cn_note_main_thread(L);                      /* (5.1, LuaJIT: see compat.h) */
  if (b == NULL) return luaL_error(L, "cosock: COSOCK_POLLER names an unknown poller '%s'", env);
  lp = lua_newuserdata(L, sizeof *lp);         /* loop */
  memset(lp, 0, sizeof *lp);
  cn_mem_init(&lp->mem, L);
  luaL_newmetatable(L, LOOP_MT);
  lua_pushcfunction(L, loop_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  cn_tasks_init(L, lp);
  if (cn_waiters_init(L, lp, b) != 0)
    return luaL_error(L, "cosock: cannot create the %s poller: %s", b->name, strerror(errno));
  /* The features attach their hooks as they open, in the order the hooks
   * are called (hooks.h): the handles', the names', accounting's before the
   * watchdog's and the predicates' (a pass's time goes to the loop before
   * predicates run), ... */
  cn_handle_open(L);                           /* uses the loop at -1 */
  cn_sites_open(L, lp);
  cn_ls_init(lp);
  luaL_newlibtable(L, funcs);                  /* loop, module */
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, funcs, 1);
  lua_newtable(L);                             /* messages: name -> words (messages.h) */
#define CN_MESSAGE_FIELD(name, words) lua_pushliteral(L, words); lua_setfield(L, -2, #name);
  CN_MESSAGES(CN_MESSAGE_FIELD)
#undef CN_MESSAGE_FIELD
  lua_setfield(L, -2, "messages");
  cn_run_open(L, lp);
  cn_step_open(L);
  cn_acct_open(L, lp);
  cn_wd_open(L, lp);
  cn_park_open(L, lp);
  cn_waiters_open(L);
  cn_fid_open(L, lp);
  cn_tobj_init(L, lp);                         /* (each *_init: its hook at load, its */
  cn_dns_init(L, lp);                          /*  functions on first use: open) */
  cn_preds_init(L, lp);
  cn_sim_init(L, lp);
  cn_cancel_open(L, lp);
  cn_trace_init(L, lp);
  cn_taskrec_init(L, lp);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, l_open, 2);
  lua_setfield(L, -2, "open");
  lua_pushliteral(L, PACKAGE_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_pushlightuserdata(L, CN_INTERNAL);
  lua_setfield(L, -2, "INTERNAL");
  cn_push_ref(L, lp->r_handle_mt);
  lua_setfield(L, -2, "thread_handle");        /* the handles' metatable (cosock.lua) */
  lua_pushboolean(L, cn_ls_enabled(lp));
  lua_setfield(L, -2, "fast_path");
  return 1;
}
