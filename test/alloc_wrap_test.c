/* alloc_wrap_test: the counting allocator that set_accounting(true) puts
 * around a Lua state's allocator (src/features/alloc_count.c), next to other
 * wrappers. Each case runs in a fresh state whose base allocator keeps every
 * block's size in a header, so that after lua_close it can tell that no
 * byte is left and that every free and resize gave the block's true size;
 * ASan and valgrind (make check runs this under both) see any call that
 * reaches freed memory, or the module's code after it was unloaded.
 *
 * Cases:
 *   counts_and_closes     the wrapper counts a task's 1 MB, lua_close frees all
 *   wrapper_on_top        another wrapper installed after it (and left on)
 *   wrapper_below         another wrapper installed before the module
 *   loaded_twice          a second load of the module reuses the wrapper
 *   stacked_with_foreign  two loads with a foreign wrapper between them:
 *                         two counting layers, both freed at lua_close
 *   never_turned_on       without set_accounting(true) the allocator stays
 *   reused_coroutine      a task whose coroutine takes the address (and the
 *                         slot) of a gone task's starts its counts at 0:
 *                         gone by its end, by its end while accounting was
 *                         off, and by reset. Below the state a recycler hands
 *                         the gone coroutine's block to the next new block of
 *                         its size, so that the address is reused every time
 *                         (glibc does it often, valgrind never)
 *
 * Environment: abs_top_srcdir and abs_top_builddir (make check sets them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

/* ---- the base allocator: sizes in a header ------------------------------- */

typedef struct base_ctx {
  size_t bytes;     /* handed out and not yet freed */
  long bad_osize;   /* frees and resizes whose osize was not the block's */
  long calls;
} base_ctx;

typedef union header { size_t size; max_align_t align; } header;

static void *base_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  base_ctx *ctx = ud;
  header *h = ptr ? (header *)ptr - 1 : NULL;
  size_t old = h ? h->size : 0;
  ctx->calls++;
  if (h && osize != old) ctx->bad_osize++;
  if (nsize == 0) {
    if (h) {
      ctx->bytes -= old;
      free(h);
    }
    return NULL;
  }
  h = realloc(h, sizeof *h + nsize);
  if (h == NULL) return NULL;
  ctx->bytes = ctx->bytes - old + nsize;
  h->size = nsize;
  return h + 1;
}

/* ---- a foreign wrapper: forwards, counts calls --------------------------- */

typedef struct foreign {
  lua_Alloc f;
  void *ud;
  long calls;
} foreign;

static void *foreign_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  foreign *w = ud;
  w->calls++;
  return w->f(w->ud, ptr, osize, nsize);
}

static void wrap_foreign(lua_State *L, foreign *w) {
  w->f = lua_getallocf(L, &w->ud);
  w->calls = 0;
  lua_setallocf(L, foreign_alloc, w);
}

/* ---- a recycler: hands a gone coroutine's block to the next new one ---- */

/* The script names the address of a coroutine that is about to go
 * (recycle_want(tostring(co))): the block that holds that address is kept
 * when the state frees it, and is the next new block of its size. */
typedef struct recycler {
  base_ctx *base;
  uintptr_t want;   /* 0: none */
  void *kept;       /* NULL: none */
  size_t size;
} recycler;

static void *recycle_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  recycler *r = ud;
  uintptr_t p = (uintptr_t)ptr;
  if (nsize == 0 && ptr != NULL && r->kept == NULL && p <= r->want && r->want < p + osize) {
    r->kept = ptr;
    r->size = osize;
    return NULL;
  }
  if (ptr == NULL && nsize > 0 && r->kept != NULL && nsize == r->size) {
    void *k = r->kept;
    r->kept = NULL;
    r->want = 0;
    return k;
  }
  return base_alloc(r->base, ptr, osize, nsize);
}

/* recycle_want("thread: 0x...") */
static int recycle_want(lua_State *L) {
  recycler *r = lua_touserdata(L, lua_upvalueindex(1));
  const char *hex = strstr(luaL_checkstring(L, 1), "0x");
  luaL_argcheck(L, hex != NULL, 1, "no address");
  r->want = (uintptr_t)strtoull(hex, NULL, 16);
  return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static const char *srcdir, *builddir;

/* The allocator of the state (base_alloc when NULL) and its ud. */
static lua_State *new_state_on(base_ctx *ctx, lua_Alloc f, void *ud) {
  lua_State *L;
  memset(ctx, 0, sizeof *ctx);
  L = lua_newstate(f ? f : base_alloc, f ? ud : ctx);
  assert_non_null(L);
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", srcdir, srcdir);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  lua_pushfstring(L, "%s/src/cpath/?.so;", builddir);
  lua_getfield(L, -2, "cpath");
  lua_concat(L, 2);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  return L;
}

static lua_State *new_state(base_ctx *ctx) { return new_state_on(ctx, NULL, NULL); }

static void must_run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) != 0) fail_msg("%s", lua_tostring(L, -1));
}

/* Runs a task that makes a 1 MB string; its metadata must show it. */
static const char TASK_1MB[] =
  "local cosock = require 'cosock'\n"
  "cosock.set_accounting(true)\n"
  "local got\n"
  "cosock.spawn(function()\n"
  "  local s = string.rep('x', 1024 * 1024)\n"
  "  for _, e in ipairs(cosock.get_thread_metadata()) do got = e.allocated end\n"
  "  assert(#s > 0)\n"
  "end, 'big')\n"
  "cosock.run()\n"
  "assert(got >= 1024 * 1024, 'allocated: ' .. tostring(got))\n";

static void close_and_check(lua_State *L, base_ctx *ctx) {
  lua_close(L);
  assert_int_equal(ctx->bad_osize, 0);
  assert_int_equal(ctx->bytes, 0);
}

/* ---- cases ----------------------------------------------------------------- */

static void counts_and_closes(void **state) {
  base_ctx ctx;
  lua_State *L = new_state(&ctx);
  void *ud;
  (void)state;
  must_run(L, TASK_1MB);
  assert_true(lua_getallocf(L, &ud) != base_alloc);
  close_and_check(L, &ctx);
}

static void wrapper_on_top(void **state) {
  base_ctx ctx;
  foreign w;
  lua_State *L = new_state(&ctx);
  (void)state;
  must_run(L, "require('cosock').set_accounting(true)");
  wrap_foreign(L, &w);                         /* stays on until lua_close */
  must_run(L, TASK_1MB);
  assert_true(w.calls > 0);
  close_and_check(L, &ctx);
}

static void wrapper_below(void **state) {
  base_ctx ctx;
  foreign w;
  lua_State *L = new_state(&ctx);
  (void)state;
  wrap_foreign(L, &w);
  must_run(L, TASK_1MB);
  close_and_check(L, &ctx);
  assert_true(w.calls > 0);
}

static void loaded_twice(void **state) {
  base_ctx ctx;
  lua_State *L = new_state(&ctx);
  lua_Alloc first, second;
  void *ud1, *ud2;
  (void)state;
  must_run(L, TASK_1MB);
  first = lua_getallocf(L, &ud1);
  must_run(L, "package.loaded['cosock'] = nil; package.loaded['cosock.core'] = nil");
  must_run(L, TASK_1MB);                       /* a new loop, the same counter */
  second = lua_getallocf(L, &ud2);
  assert_true(first == second);
  assert_ptr_equal(ud1, ud2);
  close_and_check(L, &ctx);
}

static void stacked_with_foreign(void **state) {
  base_ctx ctx;
  foreign w;
  lua_State *L = new_state(&ctx);
  void *ud1, *ud2;
  (void)state;
  must_run(L, TASK_1MB);
  lua_getallocf(L, &ud1);
  wrap_foreign(L, &w);
  must_run(L, "package.loaded['cosock'] = nil; package.loaded['cosock.core'] = nil");
  must_run(L, TASK_1MB);                       /* wraps again, on top of w */
  lua_getallocf(L, &ud2);
  assert_ptr_not_equal(ud2, &w);
  assert_ptr_not_equal(ud2, ud1);
  close_and_check(L, &ctx);
}

static void never_turned_on(void **state) {
  base_ctx ctx;
  lua_State *L = new_state(&ctx);
  void *ud;
  (void)state;
  must_run(L, "local c = require 'cosock'; c.spawn(function() end); c.run()");
  assert_true(lua_getallocf(L, &ud) == base_alloc);
  assert_ptr_equal(ud, &ctx);
  close_and_check(L, &ctx);
}

/* Task a allocates 1 MB and goes (how: the Lua code `gone`), its
 * coroutine is collected, and task b, spawned next, must get its address
 * and its slot: b's first turn must not show a's bytes. */
static const char REUSED[] =
  "local gone = ...\n"
  "local cosock = require 'cosock'\n"
  "local MB = 1024 * 1024\n"
  "local function allocated(name)\n"
  "  for _, e in ipairs(cosock.get_thread_metadata()) do\n"
  "    if e.name == name then return e.allocated end\n"
  "  end\n"
  "end\n"
  "cosock.reset()\n"
  "cosock.set_accounting(true)\n"
  "local co_a, co_b, got\n"
  "cosock.spawn(function()\n"
  "  co_a = tostring(coroutine.running())\n"
  "  local s = string.rep('a', MB)\n"
  "  assert(allocated('a') >= MB)\n"
  "  if gone == 'off' then cosock.set_accounting(false) end\n"
  "  if gone == 'reset' then cosock.socket.sleep(1000) end\n"
  "  assert(#s == MB)\n"
  "end, 'a')\n"
  "if gone == 'reset' then cosock.step(0) cosock.reset() else cosock.run() end\n"
  "recycle_want(co_a)\n"
  "collectgarbage() collectgarbage()\n"
  "cosock.set_accounting(true)\n"
  "cosock.spawn(function()\n"
  "  co_b = tostring(coroutine.running())\n"
  "  got = allocated('b')\n"
  "end, 'b')\n"
  "cosock.run()\n"
  "assert(co_b == co_a, gone .. ': b did not get the address of a (' .. co_a .. ', ' .. co_b .. ')')\n"
  "assert(got < MB, gone .. ': b shows the bytes of a: ' .. got)\n";

static void reused_coroutine(void **state) {
  static const char *gone[] = { "ended", "off", "reset" };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof gone / sizeof *gone; i++) {
    recycler r = { NULL, 0, NULL, 0 };
    base_ctx ctx;
    lua_State *L;
    r.base = &ctx;
    L = new_state_on(&ctx, recycle_alloc, &r);
    lua_pushlightuserdata(L, &r);
    lua_pushcclosure(L, recycle_want, 1);
    lua_setglobal(L, "recycle_want");
    if (luaL_loadstring(L, REUSED) != 0) fail_msg("%s", lua_tostring(L, -1));
    lua_pushstring(L, gone[i]);
    if (lua_pcall(L, 1, 0, 0) != 0) fail_msg("%s", lua_tostring(L, -1));
    lua_close(L);
    if (r.kept != NULL) base_alloc(&ctx, r.kept, r.size, 0);
    assert_int_equal(ctx.bad_osize, 0);
    assert_int_equal(ctx.bytes, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(counts_and_closes),
    cmocka_unit_test(wrapper_on_top),
    cmocka_unit_test(wrapper_below),
    cmocka_unit_test(loaded_twice),
    cmocka_unit_test(stacked_with_foreign),
    cmocka_unit_test(never_turned_on),
    cmocka_unit_test(reused_coroutine),
  };
  srcdir = getenv("abs_top_srcdir");
  builddir = getenv("abs_top_builddir");
  if (srcdir == NULL || builddir == NULL) {
    fprintf(stderr, "alloc_wrap_test: set abs_top_srcdir and abs_top_builddir (make check does)\n");
    return 1;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
