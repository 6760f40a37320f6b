/* fidelity: cosock.set_close_wakes and cosock.set_luasocket_timeouts, the
 * switches for departures from cosock 0.2.0 a program can observe
 * (doc/reference.md says what each changes, and why it is off by default).
 * One setting per loop; reset turns them off. */
#include "config.h"

#include <lauxlib.h>

#include "fidelity.h"
#include "messages.h"

/* set_close_wakes is the core's switch CN_AT_CLOSE_WAKES (hooks.h): park.c
 * and waiters.c read it there. */
static const cn_hook fid_hook;

/* Sets the switch at *flag from argument 1 (a boolean, else an error naming
 * fname); returns the previous setting. */
static int set_switch(lua_State *L, unsigned char *flag, const char *fname) {
  int was = *flag;
  if (lua_type(L, 1) != LUA_TBOOLEAN)
    return cn_argerror(L, 1, fname, "boolean expected, got %s",
                      luaL_typename(L, 1));
  *flag = (unsigned char)lua_toboolean(L, 1);
  lua_pushboolean(L, was);
  return 1;
}

/* set_close_wakes(on) -> the previous setting. */
static int l_set_close_wakes(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  unsigned char on = (unsigned char)cn_close_wakes(lp);
  set_switch(L, &on, "set_close_wakes");
  cn_hook_set(lp, &fid_hook, CN_AT(CN_AT_CLOSE_WAKES), on);
  return 1;
}

/* set_luasocket_timeouts(on) -> the previous setting. */
static int l_set_luasocket_timeouts(lua_State *L) {
  return set_switch(L, &cn_loop_get(L)->fid.luasocket_timeouts, "set_luasocket_timeouts");
}

/* close_wakes(), luasocket_timeouts() -> the setting (for the Lua layer). */
static int l_close_wakes(lua_State *L) {
  lua_pushboolean(L, cn_close_wakes(cn_loop_get(L)));
  return 1;
}

static int l_luasocket_timeouts(lua_State *L) {
  lua_pushboolean(L, cn_luasocket_timeouts(cn_loop_get(L)));
  return 1;
}

/* reset(): every switch off. */
static void fid_reset(lua_State *L, cn_loop *lp) {
  (void)L;
  cn_hook_set(lp, &fid_hook, CN_AT(CN_AT_CLOSE_WAKES), 0);
  lp->fid.luasocket_timeouts = 0;
}

static const cn_hook fid_hook = { .name = "fidelity", .reset = fid_reset };

void cn_fid_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"set_close_wakes", l_set_close_wakes}, {"close_wakes", l_close_wakes},
    {"set_luasocket_timeouts", l_set_luasocket_timeouts},
    {"luasocket_timeouts", l_luasocket_timeouts}, {NULL, NULL}
  };
  cn_hook_add(L, lp, &fid_hook);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}
