/* watchdog: cosock.set_watchdog(seconds [, action [, reporter]]), and the
 * count hook that finds a task running too long without yielding (see
 * watchdog.h and doc/accounting-and-watchdog.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "accounting.h"
#include "compat.h"
#include "hooks.h"
#include "run.h"
#include "task.h"
#include "watchdog.h"
#include "messages.h"

#define YEAR_NS ((int64_t)365 * 24 * 3600 * 1000000000)

/* The loop whose task runs under the hook now, on this OS thread (a hook
 * has no upvalues; per thread, for programs with a Lua state per thread). */
static _Thread_local cn_loop *watching;

static void wd_hook(lua_State *L, lua_Debug *ar);

void cn_wd_watch_(cn_loop *lp, lua_State *co) {
  lua_Hook h = lua_gethook(co);
  int64_t now = cn_acct_mark_or_now(lp);
  if (h == wd_hook) h = NULL;                  /* copied from the coroutine that made co */
  lp->wd.saved = h;
  lp->wd.saved_mask = h ? lua_gethookmask(co) : 0;
  lp->wd.saved_count = lua_gethookcount(co);
  lp->wd.start_ns = now;
  lp->wd.due_ns = now + lp->wd.limit_ns;
  lp->wd.co = co;
  lp->wd.slot = -1;
  lp->wd.deferring = 0;
  lp->wd.outer = watching;
  watching = lp;
  lua_sethook(co, wd_hook, lp->wd.saved_mask | LUA_MASKCOUNT, CN_WD_COUNT);
}

void cn_wd_unwatch_(cn_loop *lp) {
  lua_State *co = lp->wd.co;
  /* Unless the program set a hook of its own meanwhile: that one stays. */
  if (lua_gethook(co) == wd_hook)
    lua_sethook(co, lp->wd.saved, lp->wd.saved_mask, lp->wd.saved_count);
  lp->wd.co = NULL;
  watching = lp->wd.outer;
  lp->wd.outer = NULL;
}

static const cn_hook watch_hook;

/* Around each resume while a watchdog is set; after each until the task
 * watched when it was cleared is unwatched. */
static void wd_at(lua_State *L, cn_loop *lp, int point, cn_task *t) {
  (void)L;
  if (point == CN_AT_RESUME) {
    cn_wd_watch_(lp, t->co);
    return;
  }
  cn_wd_unwatch(lp);
  if (lp->wd.limit_ns == 0) cn_hook_set(lp, &watch_hook, CN_AT(CN_AT_RESUMED), 0);
}


/* The points the hook has on for the watchdog now. */
static void wd_points(cn_loop *lp) {
  cn_hook_set(lp, &watch_hook, CN_AT(CN_AT_RESUME), lp->wd.limit_ns != 0);
  if (lp->wd.limit_ns != 0 || lp->wd.co) cn_hook_set(lp, &watch_hook, CN_AT(CN_AT_RESUMED), 1);
  else cn_hook_set(lp, &watch_hook, CN_AT(CN_AT_RESUMED), 0);
}

/* Pushes "task '<name>' ran <n> s without yielding". */
static void push_message(lua_State *L, cn_loop *lp, int64_t ran_ns) {
  char n[32];
  double s = (double)ran_ns / 1e9;
  snprintf(n, sizeof n, s < 1000 ? "%.3g" : "%.0f", s);
  cn_push_label(L, lp, lp->wd.slot >= 0 ? lp->wd.slot : cn_current_slot(lp)); /* 'name', or the coroutine's address */
  lua_pushfstring(L, "task %s ran %s s without yielding", lua_tostring(L, -1), n);
  lua_remove(L, -2);
}

/* Pushes the traceback of the code running in L (level 0 is the function
 * the hook interrupted), and of the task's own coroutine when L is another
 * coroutine the task resumed. */
static void push_traceback(lua_State *L, cn_loop *lp) {
  luaL_traceback(L, L, NULL, 0);
  if (L != lp->wd.co) {
    luaL_traceback(L, lp->wd.co, "in the coroutine of the task that resumed it:", 0);
    lua_pushliteral(L, "\n");
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* The task ran past its due time: report it, then raise in it for the
 * "error" action. The next report, should it go on (a pcall in the task may
 * catch the error), comes after another limit. */
static void fire(lua_State *L, cn_loop *lp, int64_t now) {
  int slot = lp->wd.slot >= 0 ? lp->wd.slot : cn_current_slot(lp), top;
  luaL_checkstack(L, 12, NULL);
  top = lua_gettop(L);
  lp->wd.due_ns = now + lp->wd.limit_ns;
  push_message(L, lp, now - lp->wd.start_ns);  /* top+1 */
  cn_push_ref(L, lp->wd.r_reporter);           /* top+2 */
  if (lua_isfunction(L, top + 2)) {
    lua_createtable(L, 0, 7);
    lua_pushvalue(L, top + 1);
    lua_setfield(L, -2, "message");
    cn_task_push_name(L, lp, slot);
    lua_setfield(L, -2, "name");
    cn_task_push_handle(L, lp, slot);
    lua_setfield(L, -2, "handle");
    lua_pushnumber(L, (lua_Number)(now - lp->wd.start_ns) / 1e9);
    lua_setfield(L, -2, "seconds");
    lua_pushnumber(L, (lua_Number)lp->wd.limit_ns / 1e9);
    lua_setfield(L, -2, "limit");
    lua_pushstring(L, lp->wd.error ? "error" : "report");
    lua_setfield(L, -2, "action");
    push_traceback(L, lp);
    lua_setfield(L, -2, "traceback");
    lua_call(L, 1, 0);                         /* its errors are raised in the task */
  } else {
    push_traceback(L, lp);
    fprintf(stderr, "cosock: watchdog: %s\n%s\n", lua_tostring(L, top + 1), lua_tostring(L, -1));
    fflush(stderr);
  }
  if (lp->wd.error && lp->wd.co) {             /* (unless the reporter turned it off) */
    luaL_where(L, 0);                          /* the interrupted function's line */
    lua_pushvalue(L, top + 1);
    lua_concat(L, 2);
    lua_error(L);
  }
  lua_settop(L, top);
}

/* Is the function the hook interrupted cosock's own Lua code (lua/cosock.lua,
 * lua/cosock/...: the source prefix cosock.lua gave, followed by '.' or
 * '/'; on Lua 5.1, 5.2 and LuaJIT also the lifted wrappers of the C
 * functions that wait, kcompat.c's, which run the C continuation that takes
 * a message and return it)? The watchdog waits for the first instruction
 * outside it, whatever its action: an error inside (the "error" action's, or
 * one the reporter raises), or what a reporter does there (cancel, spawn),
 * would stop a wake-up, a delivery or a take half done, which no state
 * could then tell (a message taken and not returned). */
static int in_library(lua_State *L, cn_loop *lp, lua_Debug *ar) {
  const char *lib;
  size_t n;
  int r = 0;
  if (!lua_getinfo(L, "S", ar) || ar->source == NULL) return 0;
#ifdef CN_EMULATED_K
  if (strcmp(ar->source, CN_LIFT_SOURCE) == 0 || strcmp(ar->source, CN_LIFT_WRAPPER_SOURCE) == 0)
    return 1;
#endif
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->wd.r_lib);
  lib = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
  if (lib != NULL)
    r = strncmp(ar->source, lib, n) == 0 && (ar->source[n] == '.' || ar->source[n] == '/');
  lua_pop(L, 1);
  return r;
}

static void wd_hook(lua_State *L, lua_Debug *ar) {
  cn_loop *lp = watching;
  int mask;
  if (lp == NULL || lp->wd.co == NULL) {
    /* A coroutine made inside a watched task (Lua copies the hook into it)
     * runs outside one: the hook has nothing to do there any more. */
    lua_sethook(L, NULL, 0, 0);
    return;
  }
  if (ar->event == LUA_HOOKCOUNT && lp->wd.limit_ns) {
    int64_t now = cn_acct_now();
    if (now < lp->wd.due_ns) {
      /* (nothing due) */
    } else if (in_library(L, lp, ar)) {
      if (!lp->wd.deferring) {                 /* look again at the next instruction */
        lp->wd.deferring = 1;
        lua_sethook(L, wd_hook, lua_gethookmask(L), 1);
      }
    } else {
      if (lp->wd.deferring) {
        lp->wd.deferring = 0;
        lua_sethook(L, wd_hook, lua_gethookmask(L), CN_WD_COUNT);
      }
      fire(L, lp, now);
    }
  }
  /* The program's own hook still gets the events it asked for. */
#ifdef LUA_HOOKTAILCALL
  mask = ar->event == LUA_HOOKTAILCALL ? LUA_MASKCALL : 1 << ar->event;
#else                                          /* 5.1, LuaJIT: a tail return instead */
  mask = ar->event == LUA_HOOKTAILRET ? LUA_MASKRET : 1 << ar->event;
#endif
  if (lp->wd.saved && (lp->wd.saved_mask & mask)) lp->wd.saved(L, ar);
}

/* LuaJIT calls no hook from compiled code: while a watchdog is set its
 * compiler is off and what it compiled is flushed (jit.flush(), jit.off());
 * clearing the watchdog turns it on again if it was on. Found at run time
 * (package.loaded.jit), so that a module built for Lua 5.1 does it too when
 * LuaJIT loads it. Nothing happens on other Lua. */
#if LUA_VERSION_NUM == 501
/* Calls jit[name]() when LuaJIT's jit module is loaded; returns its first
 * result as a boolean, or -1 when there is no such function. */
static int call_jit(lua_State *L, const char *name) {
  int r = -1;
  if (!lua_checkstack(L, 3)) return -1;
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "jit");
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, name);
      if (lua_isfunction(L, -1) && lua_pcall(L, 0, 1, 0) == 0) r = lua_toboolean(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return r;
}

static void hold_jit(lua_State *L, cn_loop *lp, int hold) {
  if (hold && !lp->wd.jit_held) {
    int on = call_jit(L, "status");
    if (on < 0) return;                        /* not LuaJIT */
    lp->wd.jit_was_on = (unsigned char)on;
    call_jit(L, "flush");
    call_jit(L, "off");
    lp->wd.jit_held = 1;
  } else if (!hold && lp->wd.jit_held) {
    if (lp->wd.jit_was_on) call_jit(L, "on");
    lp->wd.jit_held = 0;
  }
}
#else
#define hold_jit(L, lp, hold) ((void)(L), (void)(lp), (void)(hold))
#endif

/* set_watchdog(seconds [, action [, reporter]]): seconds > 0, or nil for
 * none; action "report" (default) or "error"; reporter a function(report)
 * or nil for standard error. */
static int l_set_watchdog(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_Number s = 0;
  int error = 0;
  if (!lua_isnoneornil(L, 1)) {
    if (lua_type(L, 1) != LUA_TNUMBER)
      return cn_argerror(L, 1, "set_watchdog", "number or nil expected, got %s",
                        luaL_typename(L, 1));
    s = lua_tonumber(L, 1);
    if (!(s > 0) || isinf(s))
      return cn_argerror(L, 1, "set_watchdog", "finite number > 0 expected, got %s",
                        lua_tostring(L, 1));
  }
  if (!lua_isnoneornil(L, 2)) {
    const char *a = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
    if (a && strcmp(a, "error") == 0) error = 1;
    else if (a == NULL || strcmp(a, "report") != 0)
      return cn_argerror(L, 2, "set_watchdog", "'report' or 'error' expected, got %s",
                        a ? lua_pushfstring(L, "'%s'", a) : luaL_typename(L, 2));
  }
  if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TFUNCTION)
    return cn_argerror(L, 3, "set_watchdog", "function or nil expected, got %s",
                      luaL_typename(L, 3));
  lua_settop(L, 3);
  if (lua_isnil(L, 3) || s == 0) lua_pushboolean(L, 0); /* a nil would free the registry slot */
  else lua_pushvalue(L, 3);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->wd.r_reporter); /* an existing slot: no allocation */
  lp->wd.error = error;
  lp->wd.limit_ns = s == 0 ? 0 : s * 1e9 >= (double)YEAR_NS ? YEAR_NS : (int64_t)(s * 1e9);
  if (lp->wd.limit_ns == 0 && s > 0) lp->wd.limit_ns = 1;
  hold_jit(L, lp, lp->wd.limit_ns != 0);
  wd_points(lp);
  /* Changed by the task being watched: its run so far counts. */
  if (lp->wd.co) lp->wd.due_ns = lp->wd.start_ns + lp->wd.limit_ns;
  return 0;
}

/* reset(): no watchdog. */
static void wd_reset(lua_State *L, cn_loop *lp) {
  lp->wd.limit_ns = 0;
  wd_points(lp);
  hold_jit(L, lp, 0);
  lp->wd.error = 0;
  lua_pushboolean(L, 0);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->wd.r_reporter);
}

/* watchdog_library(prefix): the source prefix of cosock's own Lua code
 * ("@/.../cosock": cosock.lua gives it when loaded). */
static int l_watchdog_library(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  luaL_checktype(L, 1, LUA_TSTRING);
  lua_settop(L, 1);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->wd.r_lib); /* an existing slot: no allocation */
  return 0;
}

static void wd_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->wd.r_reporter);
  cn_unref(L, &lp->wd.r_lib);
}

static const cn_hook watch_hook = {
  .name = "watchdog", .at = wd_at, .reset = wd_reset, .free = wd_free
};

void cn_wd_open(lua_State *L, cn_loop *lp) {
  cn_hook_add(L, lp, &watch_hook);
  lua_pushboolean(L, 0);                       /* a registry slot (a nil would not take one) */
  lp->wd.r_reporter = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->wd.r_lib = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushcclosure(L, l_set_watchdog, 1);
  lua_setfield(L, -2, "set_watchdog");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, l_watchdog_library, 1);
  lua_setfield(L, -2, "watchdog_library");
}
