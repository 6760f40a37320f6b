/* kcompat: continuations where the C API has none (Lua 5.1, 5.2, LuaJIT).
 *
 * On 5.3 and 5.4 a C function waits with lua_yieldk and goes on in its
 * continuation. Lua 5.1 and LuaJIT cannot yield from C and go on; 5.2's
 * continuations take an int context. So there the yield moves into Lua
 * (compat.h, cn_yieldk): the C function returns
 *   KMARK, saved, v1 ... vn
 * where saved holds its stack below the n values, k and ctx. The function's
 * lifted wrapper (a Lua function made by cn_lift_fields) sees the mark,
 * yields v1 ... vn from Lua, and when resumed calls the C function again as
 * f(saved, r1 ... rm); CN_RESUMABLE finds saved in argument 1, puts the
 * stack back and runs k(L, LUA_YIELD, ctx), as lua_yieldk would have. The C
 * function runs again as the same closure, so k sees the same upvalues.
 *
 * A saved call is a full userdata with a metatable only this file has, so
 * Lua cannot forge one; it runs once (k is cleared when it runs). Its stack
 * is in a table kept as its environment (5.1) or user value (5.2). */
#include "config.h"

#include "compat.h"

#ifdef CN_EMULATED_K

#include <string.h>

typedef struct {
  lua_KFunction k;                             /* NULL once it ran */
  lua_KContext ctx;
  int nbase;
} saved_call;

static char kmark;                             /* the yield mark (light userdata) */
static char saved_mt_key;                      /* registry: the saved calls' metatable */
static char lift_key;                          /* registry: function(f) -> wrapper */

static void push_saved_mt(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &saved_mt_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "cosock: a saved call");
    lua_setfield(L, -2, "__metatable");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &saved_mt_key);
  }
}

static void set_env(lua_State *L, int idx) {
#if LUA_VERSION_NUM == 501
  lua_setfenv(L, idx);
#else
  (lua_setuservalue)(L, idx);
#endif
}

static void get_env(lua_State *L, int idx) {
#if LUA_VERSION_NUM == 501
  lua_getfenv(L, idx);
#else
  (lua_getuservalue)(L, idx);
#endif
}

int cn_yieldk(lua_State *L, int n, lua_KContext ctx, lua_KFunction k) {
  int top = lua_gettop(L), nbase = top - n, i;
  saved_call *s;
  if (!cn_isyieldable(L)) cn_wait_outside_task(L);
  luaL_checkstack(L, 6, NULL);
  /* Made before anything moves: a memory error leaves the stack as it was. */
  lua_createtable(L, nbase, 0);
  s = lua_newuserdata(L, sizeof *s);
  push_saved_mt(L);
  lua_setmetatable(L, -2);
  s->k = k;
  s->ctx = ctx;
  s->nbase = nbase;
  lua_insert(L, -2);                           /* ..., saved, stack */
  for (i = 1; i <= nbase; i++) {
    lua_pushvalue(L, i);
    lua_rawseti(L, -2, i);
  }
  set_env(L, -2);                              /* ..., saved */
  lua_pushlightuserdata(L, &kmark);
  lua_insert(L, nbase + 1);
  lua_insert(L, nbase + 2);                    /* base, mark, saved, v1 ... vn */
  return n + 2;
}

int cn_kresume(lua_State *L) {
  saved_call *s = lua_touserdata(L, 1);
  lua_KFunction k;
  lua_KContext ctx;
  int i, nbase;
  if (s == NULL || !lua_getmetatable(L, 1)) return -1;
  push_saved_mt(L);
  if (!lua_rawequal(L, -1, -2)) {
    lua_pop(L, 2);
    return -1;
  }
  lua_pop(L, 2);
  if ((k = s->k) == NULL) return luaL_error(L, "cosock: a saved call resumed twice");
  s->k = NULL;
  ctx = s->ctx;                                /* (s may go once it leaves the stack) */
  nbase = s->nbase;
  luaL_checkstack(L, 2, NULL);
  get_env(L, 1);
  lua_insert(L, 2);                            /* saved, stack, r1 ... rm */
  for (i = 1; i <= nbase; i++) {
    luaL_checkstack(L, 1, NULL);
    lua_rawgeti(L, 2, i);
    lua_insert(L, 2 + i);                      /* saved, stack, b1 ... bi, r... */
  }
  lua_remove(L, 2);
  lua_remove(L, 1);                            /* b1 ... bn, r1 ... rm */
  return k(L, LUA_YIELD, ctx);
}

/* The lift: (f, name) -> a Lua function that calls f and does the yields f
 * asks for; f is called through a local named name, so that an argument
 * error names it. `(...) ~= mark` keeps the number of results f gave (none
 * is none). While it waits, finish's third local is the first value yielded
 * (the object a direct wait waits on: CN_WAIT_LOCAL, for metadata.c). One
 * factory per name, kept by name. */
static const char lift_source[] =
  "local mark, yield, select, load, format = ...\n"
  "local function finish(f, ...)\n"
  "  if (...) ~= mark then return ... end\n"
  "  local saved, waits_on = select(2, ...)\n"
  "  return finish(f, f(saved, yield(select(3, ...))))\n"
  "end\n"
  "local factories = {}\n"
  "return function(f, name)\n"
  "  local make = factories[name]\n"
  "  if make == nil then\n"
  "    make = load(format('local finish, %s = ...\\n'\n"
  "      .. 'return function(...) return finish(%s, %s(...)) end', name, name, name), '" CN_LIFT_WRAPPER_SOURCE "')\n"
  "    factories[name] = make\n"
  "  end\n"
  "  return make(finish, f)\n"
  "end\n";

static void push_lift(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &lift_key) == LUA_TFUNCTION) return;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, lift_source, sizeof lift_source - 1, CN_LIFT_SOURCE) != 0)
    lua_error(L);
  lua_pushlightuserdata(L, &kmark);
  lua_getglobal(L, "coroutine");
  lua_getfield(L, -1, "yield");
  lua_replace(L, -2);
  lua_getglobal(L, "select");
  lua_getglobal(L, "loadstring");              /* (5.1, LuaJIT: load takes a reader) */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_getglobal(L, "load");
  }
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  lua_replace(L, -2);
  lua_call(L, 5, 1);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &lift_key);
}

void cn_lift_fields(lua_State *L, int t, const char *const *names) {
  t = lua_absindex(L, t);
  luaL_checkstack(L, 7, NULL);
  push_lift(L);
  for (; *names != NULL; names++) {
    lua_pushvalue(L, -1);
    lua_getfield(L, t, *names);
    lua_pushstring(L, *names);
    lua_call(L, 2, 1);
    lua_setfield(L, t, *names);
  }
  lua_pop(L, 1);
}

#endif /* CN_EMULATED_K */

#if LUA_VERSION_NUM < 502
static char main_key;                          /* registry: the main thread */

void cn_note_main_thread(lua_State *L) {
  if (lua_pushthread(L)) lua_rawsetp(L, LUA_REGISTRYINDEX, &main_key);
  else lua_pop(L, 1);
}

void cn_push_main_thread(lua_State *L) {
  if (lua_pushthread(L)) return;
  lua_pop(L, 1);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &main_key);
}
#endif
