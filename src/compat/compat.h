/* compat: every difference between the Lua C APIs this module builds against
 * (5.1, 5.2, 5.3, 5.4 and LuaJIT 2.1), in one place, so the other files call
 * one name whatever the version. Each helper states what it does on each.
 * This header is the Lua-version layer's (src/compat/: it, compat53.h and
 * compat53.c, the 5.3 API for 5.1, 5.2 and LuaJIT, and kcompat.c, continuations
 * where the C API has none); what belongs there includes nothing of
 * src/loop/ or src/features/ (scripts/check-layers.sh).
 *
 * Lua 5.4 changed, for what this module uses:
 *  - lua_resume takes a fourth argument and reports the number of values the
 *    coroutine yielded or returned. After a yield from a C function (lua_yieldk)
 *    those values are only the top of the coroutine's stack: the function's
 *    own slots stay below them, for its continuation. 5.3 leaves the yielded
 *    values alone on the stack.
 *  - a coroutine can be closed (lua_resetthread, lua_closethread from 5.4.6),
 *    which runs its pending to-be-closed variables. 5.3 has nothing to close.
 * lua_newuserdata, lua_getuservalue and lua_setuservalue are macros over the
 * 5.4 "uservalue n" functions with n = 1, the same single value 5.3 has.
 *
 * Lua 5.1, 5.2 and LuaJIT lack some of the 5.3 C API this module uses:
 * compat53.h supplies it under the prefix cn_c53_ (compiled once, in
 * compat53.c; no lua-compat-5.3 needed). What it cannot supply is a C
 * function that yields and goes on when resumed (no lua_yieldk on 5.1 and
 * LuaJIT; 5.2's takes an int context): continuations are emulated there
 * (kcompat.c, see cn_yieldk). */
#ifndef COSOCK_COMPAT_H
#define COSOCK_COMPAT_H

#include <math.h>
#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>
#ifdef CN_LUAJIT
#include <luajit.h>                            /* LUAJIT_VERSION_NUM, luaJIT_setmode */
#endif

#if LUA_VERSION_NUM < 501 || LUA_VERSION_NUM > 504
#error "cosock-native builds against Lua 5.1, 5.2, 5.3, 5.4 or LuaJIT 2.1"
#endif

#if LUA_VERSION_NUM < 503
#define CN_EMULATED_K 1
#include "compat53.h"
/* Our own context type: the call sites pass pointers and lua_Integers as
 * contexts, which 5.2's int cannot hold. */
#define lua_KContext cn_kcontext
#define lua_KFunction cn_kfunction
typedef intptr_t cn_kcontext;
typedef int (*cn_kfunction)(lua_State *L, int status, cn_kcontext ctx);

/* 5.3's lua_tointegerx: a number with an integral value (or a string that
 * converts to one) that fits a lua_Integer; anything else is not one (the
 * 5.1 and LuaJIT versions truncate 1.5 to 1 and call it one). */
static inline lua_Integer cn_tointegerx(lua_State *L, int idx, int *isint) {
  int isnum = 0;
  lua_Number n = lua_tonumberx(L, idx, &isnum);
  int ok = isnum && n == floor(n) && n >= -9007199254740992.0 && n <= 9007199254740992.0;
  if (isint != NULL) *isint = ok;
  return ok ? (lua_Integer)n : 0;
}
#undef lua_tointegerx
#define lua_tointegerx cn_tointegerx
#endif

/* current_task.c: raises the error of a wait outside any task when L is the
 * main thread; returns 0 otherwise (Lua's own error follows). */
int cn_wait_outside_task(lua_State *L);

/* Yields the n values on top of L's stack; when resumed, k(L, LUA_YIELD,
 * ctx) runs with the stack as it was below them plus the resume values, and
 * its results are the call's. On 5.3 and 5.4 this is lua_yieldk. Elsewhere
 * the function returns instead: a mark, a saved-call object holding the
 * stack and k, and the n values; the Lua function that wraps it (cn_lift_fields)
 * yields them from Lua and, when resumed, calls the function again with the
 * saved call and the resume values: CN_RESUMABLE, the function's first
 * statement, then restores the stack and runs k. So a function that yields
 * this way must be called through its lifted wrapper, from Lua. */
#ifdef CN_EMULATED_K
int cn_yieldk(lua_State *L, int n, lua_KContext ctx, lua_KFunction k);
int cn_kresume(lua_State *L);
#define CN_RESUMABLE(L)                                     \
  do {                                                      \
    if (lua_type((L), 1) == LUA_TUSERDATA) {                \
      int cn_kr_ = cn_kresume(L);                           \
      if (cn_kr_ >= 0) return cn_kr_;                      \
    }                                                       \
  } while (0)
#else
#define cn_yieldk(L, n, ctx, k) \
  ((void)(cn_isyieldable(L) || cn_wait_outside_task(L)), lua_yieldk((L), (n), (ctx), (k)))
#define CN_RESUMABLE(L) ((void)(L))
#endif

/* The chunk names of the lifted wrappers' Lua code (kcompat.c): cosock's
 * own code, which the watchdog does not interrupt (watchdog.c). */
#define CN_LIFT_SOURCE "=cosock.lift"
#define CN_LIFT_WRAPPER_SOURCE "=cosock"

/* Replaces each function t[names[i]] (t at index t) by its lifted wrapper
 * (see cn_yieldk); does nothing where lua_yieldk exists. */
#ifdef CN_EMULATED_K
void cn_lift_fields(lua_State *L, int t, const char *const *names);
#else
#define cn_lift_fields(L, t, names) ((void)(L), (void)(t), (void)(names))
#endif

/* Where a directly parked task's object is while it waits (metadata.c):
 * local CN_WAIT_LOCAL of stack level CN_WAIT_LEVEL of its coroutine. With
 * lua_yieldk, the first argument of the C function that yielded; with the
 * emulation, the local kcompat.c's lift keeps it in, below coroutine.yield. */
#ifdef CN_EMULATED_K
#define CN_WAIT_LEVEL 1
#define CN_WAIT_LOCAL 3
#else
#define CN_WAIT_LEVEL 0
#define CN_WAIT_LOCAL 1
#endif

/* May L yield to whoever resumed it? 5.3, 5.4 and LuaJIT know (it is false
 * also inside a C call that cannot be yielded across). On 5.1 and 5.2 only
 * the main thread is known not to: a yield that is not allowed fails in Lua
 * with the interpreter's own message. */
static inline int cn_isyieldable(lua_State *L) {
#if LUA_VERSION_NUM >= 503 || defined(LUAJIT_VERSION_NUM)
  return lua_isyieldable(L);
#else
  int main = lua_pushthread(L);
  lua_pop(L, 1);
  return !main;
#endif
}

/* Is the answer above sure? The loop parks a task directly (a wait noted
 * before the yield, cn_prepark) only when it is: where a yield may still
 * fail after the note, the note would outlive the failed wait. Building
 * with -DCN_NO_DIRECT_PARK makes every wait take the yield-tuple path, as
 * on 5.1 and 5.2 (a test build: the suite then covers that path). */
#if (LUA_VERSION_NUM >= 503 || defined(LUAJIT_VERSION_NUM)) && !defined(CN_NO_DIRECT_PARK)
#define CN_KNOWS_YIELDABLE 1
#else
#define CN_KNOWS_YIELDABLE 0
#endif

/* The user value of the userdata at idx: any value, nil at first. 5.1 and
 * LuaJIT keep only a table there (the environment) and 5.2 a table or nil:
 * the value goes into a table of one. cn_getuservalue returns its type. */
static inline void cn_setuservalue(lua_State *L, int idx) {
#if LUA_VERSION_NUM >= 503
  lua_setuservalue(L, idx);
#else
  idx = lua_absindex(L, idx);
  lua_createtable(L, 1, 0);
  lua_insert(L, -2);
  lua_rawseti(L, -2, 1);
#if LUA_VERSION_NUM == 501
  lua_setfenv(L, idx);
#else
  (lua_setuservalue)(L, idx);
#endif
#endif
}

static inline int cn_getuservalue(lua_State *L, int idx) {
#if LUA_VERSION_NUM >= 503
  return lua_getuservalue(L, idx);
#else
  idx = lua_absindex(L, idx);
#if LUA_VERSION_NUM == 501
  lua_getfenv(L, idx);
  lua_pushvalue(L, LUA_GLOBALSINDEX);          /* a new userdata's: no value set */
  if (lua_rawequal(L, -1, -2)) {
    lua_pop(L, 2);
    lua_pushnil(L);
    return LUA_TNIL;
  }
  lua_pop(L, 1);
#else
  (lua_getuservalue)(L, idx);
  if (lua_isnil(L, -1)) return LUA_TNIL;
#endif
  lua_rawgeti(L, -1, 1);
  lua_remove(L, -2);
  return lua_type(L, -1);
#endif
}

/* Pushes the main thread of L's state. 5.1 and LuaJIT keep no reference to
 * it: the module notes the thread it was opened from when that is the main
 * one (cn_note_main_thread), or L when it is; else nil is pushed. */
#if LUA_VERSION_NUM >= 502
static inline void cn_push_main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
}
#define cn_note_main_thread(L) ((void)(L))
#else
void cn_push_main_thread(lua_State *L);
void cn_note_main_thread(lua_State *L);
#endif

/* Resumes co with the nargs values on top of its stack. *nres gets the
 * number of values it yielded or returned: on LUA_YIELD the caller takes
 * those off the top (and no more) before resuming it again. */
static inline int cn_resume(lua_State *co, lua_State *from, int nargs, int *nres) {
#if LUA_VERSION_NUM >= 504
  return lua_resume(co, from, nargs, nres);
#else                                          /* (5.1: compat53.h drops from) */
  int status = lua_resume(co, from, nargs);
  *nres = lua_gettop(co);
  return status;
#endif
}

/* Closes a cancelled task's coroutine co, from L: runs its pending
 * to-be-closed variables, newest first, as coroutine.close does. Only a
 * suspended coroutine (yielded, or never started) is closed: one that is
 * running or has resumed another is left alone. Returns LUA_OK, or an error
 * status with the error value pushed on L (a __close that raised; the last
 * such error, as Lua's own closing keeps). Nothing happens before 5.4. */
static inline int cn_close_thread(lua_State *L, lua_State *co) {
#if LUA_VERSION_NUM >= 504
  lua_Debug ar;
  int status;
  if (co == L) return LUA_OK;
  if (lua_status(co) != LUA_YIELD &&
      (lua_status(co) != LUA_OK || lua_getstack(co, 0, &ar) > 0))
    return LUA_OK;
#if LUA_VERSION_RELEASE_NUM >= 50406
  status = lua_closethread(co, L);
#else
  status = lua_resetthread(co);
#endif
  if (status != LUA_OK) lua_xmove(co, L, 1);   /* the error value */
  lua_settop(co, 0);
  return status;
#else
  (void)L;
  (void)co;
  return LUA_OK;
#endif
}

#endif
