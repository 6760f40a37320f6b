/* ls_layout_test: the layout probe of src/features/luasocket_tcp.c against the
 * LuaSocket the tests run with, on the platform they run on (make check runs
 * it natively; scripts/cross-test.sh on arm64 and armhf under qemu, where
 * pointers, size_t and the struct padding differ). It says which way the
 * fast path goes there: LuaSocket's connected TCP objects pass the probe,
 * and then every field the fast paths read or write is where LuaSocket
 * keeps it (LuaSocket's own methods see what the fast path did); or they
 * fail it, and the wrappers call the methods. Anything else fails.
 *
 * Cases:
 *   probe_on_this_platform  a connected client passes the probe (printed
 *                           with the pointer size); a copy of it, a smaller
 *                           object of the same class, a server, a table and
 *                           every object once the fast path is off fail it
 *   fields_match_luasocket  a line taken from the buffer directly, then the
 *                           rest read by LuaSocket; bytes sent directly
 *                           arrive, and getstats counts both ways; after
 *                           close (socket -1) peek and send refuse
 *
 * Environment: none; LuaSocket comes from Lua's default paths. */
#include "config.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <lualib.h>

#include "loop.h"
#include "luasocket_tcp.h"

/* A fresh state with a connected pair (client at 1, accepted at 2, the
 * listening server at 3) and a loop whose fast path is on. */
static lua_State *pair(cn_loop *lp) {
  static const char code[] =
      "local socket = require 'socket'\n"
      "local srv = assert(socket.bind('127.0.0.1', 0))\n"
      "local ip, port = srv:getsockname()\n"
      "local c = assert(socket.connect(ip, port))\n"
      "srv:settimeout(5)\n"
      "local s = assert(srv:accept())\n"
      "c:settimeout(5); s:settimeout(5)\n"
      "return c, s, srv\n";
  lua_State *L = luaL_newstate();
  assert_non_null(L);
  luaL_openlibs(L);
  if (luaL_loadstring(L, code) != 0 || lua_pcall(L, 0, 3, 0) != 0) fail_msg("%s", lua_tostring(L, -1));
  memset(lp, 0, sizeof *lp);
  return L;
}

/* Calls method name of the object at idx with a string argument (or none)
 * and leaves its first result on the stack. */
static void call(lua_State *L, int idx, const char *name, const char *arg) {
  lua_getfield(L, idx, name);
  lua_pushvalue(L, idx);
  if (arg != NULL) lua_pushstring(L, arg);
  if (lua_pcall(L, arg != NULL ? 2 : 1, 1, 0) != 0) fail_msg("%s: %s", name, lua_tostring(L, -1));
}

/* The probe refuses the userdata on top (a fake of the client's class),
 * which then loses that class again so that LuaSocket's __gc never sees it. */
static void refuses_fake(lua_State *L, cn_loop *lp) {
  lua_getfield(L, LUA_REGISTRYINDEX, "tcp{client}");
  lua_setmetatable(L, -2);
  assert_null(cn_ls_tcp(L, lp, lua_gettop(L)));
  lua_pushnil(L);
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

static void probe_on_this_platform(void **state) {
  cn_loop lp;
  lua_State *L = pair(&lp);
  size_t size = lua_rawlen(L, 1);
  char *copy;
  int closed = -1, i;
  (void)state;
  cn_ls_init(&lp);
  if (!cn_ls_enabled(&lp)) {                   /* built or run with the fast path off */
    printf("ls_layout_test: the fast path is off: the probe refuses every object\n");
    assert_null(cn_ls_tcp(L, &lp, 1));
    lua_close(L);
    return;
  }
  assert_ptr_equal(cn_ls_tcp(L, &lp, 1), lua_touserdata(L, 1));
  assert_ptr_equal(cn_ls_tcp(L, &lp, 2), lua_touserdata(L, 2));
  printf("ls_layout_test: LuaSocket's tcp{client} passes the probe here (%zu-byte pointers,"
         " %zu-byte size_t, objects of %zu bytes): the fast path runs\n",
         sizeof(void *), sizeof(size_t), size);
  /* The same bytes elsewhere: its pointers into itself point into the original. */
  copy = lua_newuserdata(L, size);
  memcpy(copy, lua_touserdata(L, 1), size);
  memcpy(copy, &closed, sizeof closed);
  refuses_fake(L, &lp);
  /* Too small for LuaSocket's buffer. */
  memset(lua_newuserdata(L, 64), 0, 64);
  refuses_fake(L, &lp);
  assert_null(cn_ls_tcp(L, &lp, 3));           /* tcp{server} */
  lua_newtable(L);
  assert_null(cn_ls_tcp(L, &lp, -1));
  assert_int_equal(cn_ls_fd(L, &lp, -1), CN_FD_UNKNOWN);
  lua_pop(L, 1);
  /* The fd reader: what getfd() says, for the client and the server classes. */
  for (i = 1; i <= 3; i++) {
    call(L, i, "getfd", NULL);
    assert_int_equal(cn_ls_fd(L, &lp, i), lua_tointeger(L, -1));
    lua_pop(L, 1);
  }
  lp.ls.off = 1;
  assert_null(cn_ls_tcp(L, &lp, 1));
  assert_int_equal(cn_ls_fd(L, &lp, 1), CN_FD_UNKNOWN);
  lua_close(L);
}

/* Waits (at most 5 s) until the client's socket is readable. */
static void wait_readable(const char *tcp) {
  struct pollfd p;
  memcpy(&p.fd, tcp, sizeof p.fd);             /* t_tcp starts with its socket */
  p.events = POLLIN;
  assert_int_equal(poll(&p, 1, 5000), 1);
}

static void fields_match_luasocket(void **state) {
  cn_loop lp;
  lua_State *L = pair(&lp);
  char *tcp;
  const char *line;
  size_t len;
  (void)state;
  if ((tcp = cn_ls_tcp(L, &lp, 1)) == NULL) {
    printf("ls_layout_test: the probe refused LuaSocket's client: the methods run, nothing to match\n");
    lua_close(L);
    return;
  }
  call(L, 2, "send", "one\ntwo\nrest");
  lua_pop(L, 1);
  wait_readable(tcp);
  assert_int_equal(cn_ls_peek_line(tcp, &line, &len), 1);  /* one recv() takes all 12 bytes */
  assert_int_equal(len, 3);
  assert_memory_equal(line, "one", 3);
  assert_true(cn_ls_buffered(tcp));
  cn_ls_take(tcp, len + 1);
  call(L, 1, "receive", "*l");                 /* LuaSocket reads on from where we stopped */
  assert_string_equal(lua_tostring(L, -1), "two");
  call(L, 1, "receive", "4");
  assert_string_equal(lua_tostring(L, -1), "rest");
  assert_false(cn_ls_buffered(tcp));
  call(L, 1, "getstats", NULL);                /* bytes received: ours and LuaSocket's */
  assert_int_equal(lua_tointeger(L, -1), 12);
  lua_pop(L, 3);
  assert_int_equal(cn_ls_send(tcp, "xyz", 3), 3);
  call(L, 2, "receive", "3");
  assert_string_equal(lua_tostring(L, -1), "xyz");
  lua_getfield(L, 1, "getstats");              /* bytes sent: the second result */
  lua_pushvalue(L, 1);
  lua_call(L, 1, 2);
  assert_int_equal(lua_tointeger(L, -1), 3);
  lua_pop(L, 2);
  /* The peer closes, nothing buffered: "closed" without a second recv(),
   * LuaSocket's state untouched (its own receive says the same after). */
  call(L, 2, "close", NULL);
  lua_pop(L, 1);
  wait_readable(tcp);
  assert_int_equal(cn_ls_peek_line(tcp, &line, &len), -2);
  assert_false(cn_ls_buffered(tcp));
  lua_getfield(L, 1, "receive");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 3);
  assert_true(lua_isnil(L, -3));
  assert_string_equal(lua_tostring(L, -2), "closed");
  assert_string_equal(lua_tostring(L, -1), "");
  lua_pop(L, 3);
  call(L, 1, "close", NULL);                   /* socket -1: back to LuaSocket's methods */
  assert_int_equal(cn_ls_peek_line(tcp, &line, &len), -1);
  assert_int_equal(cn_ls_fd(L, &lp, 1), -1);
  assert_int_equal(cn_ls_send(tcp, "x", 1), -1);
  lua_close(L);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(probe_on_this_platform),
    cmocka_unit_test(fields_match_luasocket),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
