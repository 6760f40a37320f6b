/* alloc_sweep_test: allocation failure everywhere, one allocation at a time.
 *
 * Each sweep runs a piece of Lua in a fresh lua_State whose allocator fails
 * every allocation after the N-th, for N = 0, 1, 2, ... until the piece
 * completes; then again with only two allocations failing (see sweep()).
 * After each try it turns allocation back on and checks
 * that the loop is still usable: every task can be cancelled, run() returns,
 * reset() works, nothing is left in the loop, the whole workload then runs
 * to the end, and after lua_close no byte the allocator handed out and no fd
 * is left. The loop's own C memory (task slots, waits, fd arrays) comes from
 * the Lua allocator too (src/loop/mem.c), so the sweep fails those allocations
 * as well.
 *
 * The one error a try may end with is a memory error; anything else (a
 * lost wake that ran into a timeout, a stall) fails the sweep.
 *
 * Sweeps (the Lua pieces are in test/alloc_workload.lua):
 *   open_module       require "cosock.core" (the loop's creation)
 *   workload          tasks, channels, sleeps, TCP echo on 127.0.0.1,
 *                     cancels, an erroring task
 *   reset_parked      reset() with tasks parked on a channel, sockets, an
 *                     object and a timer
 *   cancel_parked     cancel() of each of those tasks
 *   receive_in_pcall  a channel receive that fails inside pcall, then a
 *                     plain yield
 *   delivery          the second mode: one failure, the program goes on, and
 *                     delivery and wakes are checked after (W.delivery)
 *
 * Environment: abs_top_srcdir and abs_top_builddir (make check sets them)
 * locate the Lua modules and the built cosock.core; ALLOC_SWEEP_STRIDE=K
 * tries every K-th N only (make check-valgrind uses it: memcheck makes each
 * try about 20 times slower); ALLOC_SWEEP_FROM=N starts each sweep at N and
 * ALLOC_SWEEP_TWO_FAIL=1 runs the two-fail pass only (to replay a failure a
 * sweep reported); ALLOC_SWEEP_ONLY=name runs that sweep alone;
 * ALLOC_SWEEP_DELIVERY_STRIDE=K: see delivery(); ALLOC_SWEEP_SHARD=I/N tries
 * only the I-th of every N values of N that the stride gives (I from 1), so
 * that N processes share a sweep (make check runs two: test/alloc-sweep). */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#ifndef LUA_OK
#define LUA_OK 0                               /* (5.1, LuaJIT) */
#endif

/* ---- the failing allocator ------------------------------------------------ */

typedef struct alloc_ctx {
  size_t bytes;   /* handed out and not yet freed */
  long count;     /* allocations (new blocks and growths) so far */
  long limit;     /* the count after which they fail; -1: never */
  int burst;      /* fail only the two after limit (Lua retries once) */
  long bad_osize; /* calls whose osize was not the block's size */
} alloc_ctx;

/* Each block carries its size, so the byte count does not trust osize, and
 * a caller that passes a wrong one (the loop's C memory, src/loop/mem.c) shows. */
typedef union header { size_t size; max_align_t align; } header;

static void *sweep_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  alloc_ctx *ctx = ud;
  header *h = ptr ? (header *)ptr - 1 : NULL;
  size_t old = h ? h->size : 0;
  if (h && osize != old) ctx->bad_osize++;
  if (nsize == 0) {
    if (h) {
      ctx->bytes -= old;
      free(h);
    }
    return NULL;
  }
  /* Lua requires that shrinking never fails; every other request counts. */
  if (nsize > old) {
    ctx->count++;
    if (ctx->limit >= 0 && ctx->count > ctx->limit && (!ctx->burst || ctx->count <= ctx->limit + 2))
      return NULL;
  }
  h = realloc(h, sizeof *h + nsize);
  if (h == NULL) return NULL;
  ctx->bytes = ctx->bytes - old + nsize;
  h->size = nsize;
  return h + 1;
}

/* ---- helpers ----------------------------------------------------------------- */

static const char *srcdir, *builddir;
static long stride = 1;
static long from = 0;         /* the first N each sweep tries */
static int two_fail_only = 0; /* skip the all-fail pass */
static long shard_i = 0, shard_n = 1; /* ALLOC_SWEEP_SHARD, from 0 */
static int verbose;
static long leaked_sockets;
static long current_n = -1;
static int current_burst;
static const char *current_sweep = "";
static const char *current_stage = ""; /* which part of a try runs: for on_alarm */

static void on_alarm(int sig) {
  char msg[256];
  int n = snprintf(msg, sizeof msg, "alloc_sweep_test: %s at N=%ld%s did not finish in time (in %s)\n",
                   current_sweep, current_n, current_burst ? " (two fail)" : "", current_stage);
  (void)sig;
  if (n > 0 && write(2, msg, (size_t)n) < 0) _exit(3);
  _exit(2);
}

/* Open fds that are not sockets (the loop's own: an epoll instance), and
 * the sockets open now that were not open at *before (NULL: none recorded).
 * Leaked sockets are closed: a leak is reported once and does not pile up. */
static int fd_is_socket(int fd) {
  char path[64], target[64];
  ssize_t n;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  n = readlink(path, target, sizeof target - 1);
  if (n < 0) return 0;
  target[n] = 0;
  return strncmp(target, "socket:", 7) == 0;
}

typedef struct fd_snapshot { int other; unsigned char sock[1024]; } fd_snapshot;

/* (From the directory of open fds: two snapshots a try, a probe of each
 * possible fd was a thousand system calls each.) */
static void snapshot_fds(fd_snapshot *s) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int self;
  memset(s, 0, sizeof *s);
  assert_non_null(d);
  self = dirfd(d);
  while ((e = readdir(d)) != NULL) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (*e->d_name == '.' || *end != 0 || fd == self || fd < 0 || fd >= (long)sizeof s->sock) continue;
    if (fd_is_socket((int)fd)) s->sock[fd] = 1;
    else s->other++;
  }
  closedir(d);
}

/* How many sockets are open now that were not in before; closes them. */
static int close_new_sockets(const fd_snapshot *before) {
  fd_snapshot now;
  int fd, n = 0;
  snapshot_fds(&now);
  for (fd = 0; fd < (int)sizeof now.sock; fd++)
    if (now.sock[fd] && !before->sock[fd]) {
      close(fd);
      n++;
    }
  return n;
}

/* ---- compiled modules, kept across tries -------------------------------------- */

/* Parsing the workload's thirty modules took most of a try's setup. Every
 * try's setup (and the checks after it) runs with allocation on, so there
 * the modules load from their compiled chunks, kept here in the test's own
 * memory across tries (the chunk name stays "@path": messages and tracebacks
 * are the same). The body (allocation failing) loads what it loads through
 * Lua's own searcher, from source, as a program does. */
typedef struct chunk { char *path, *code; size_t len, cap; } chunk;
static chunk *chunks;
static size_t nchunks;

static int put_code(lua_State *L, const void *p, size_t sz, void *ud) {
  chunk *c = ud;
  (void)L;
  if (c->len + sz > c->cap) {
    size_t cap = c->cap ? c->cap : 4096;
    char *code;
    while (cap < c->len + sz) cap *= 2;
    code = realloc(c->code, cap);
    if (code == NULL) return 1;
    c->code = code;
    c->cap = cap;
  }
  memcpy(c->code + c->len, p, sz);
  c->len += sz;
  return 0;
}

/* The chunk of the file at path, compiled the first time (NULL: none). */
static chunk *compiled(lua_State *L, const char *path) {
  size_t i;
  chunk *c;
  for (i = 0; i < nchunks; i++)
    if (strcmp(chunks[i].path, path) == 0) return &chunks[i];
  if (luaL_loadfile(L, path) != LUA_OK) {
    lua_pop(L, 1);
    return NULL;
  }
  c = realloc(chunks, (nchunks + 1) * sizeof *chunks);
  assert_non_null(c);
  chunks = c;
  c = &chunks[nchunks];
  memset(c, 0, sizeof *c);
#if LUA_VERSION_NUM >= 503
  assert_int_equal(lua_dump(L, put_code, c, 0), 0);
#else
  assert_int_equal(lua_dump(L, put_code, c), 0);
#endif
  lua_pop(L, 1);
  c->path = strdup(path);
  assert_non_null(c->path);
  nchunks++;
  return c;
}

/* The first file package.path's templates give for name (NULL: none);
 * what package.searchpath does, which Lua 5.1 lacks. */
static const char *find_module(lua_State *L, const char *name) {
  const char *templates;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  templates = lua_tostring(L, -1);
  name = luaL_gsub(L, name, ".", "/");
  while (templates != NULL && *templates) {
    const char *end = strchr(templates, ';'), *path;
    size_t len = end ? (size_t)(end - templates) : strlen(templates);
    FILE *f;
    lua_pushlstring(L, templates, len);
    path = luaL_gsub(L, lua_tostring(L, -1), "?", name);
    if ((f = fopen(path, "r")) != NULL) {
      fclose(f);
      return path;
    }
    lua_pop(L, 2);
    templates = end ? end + 1 : NULL;
  }
  return NULL;
}

/* A searcher: the module's file on package.path, loaded from its chunk. */
static int search_compiled(lua_State *L) {
  const char *path = find_module(L, luaL_checkstring(L, 1));
  chunk *c;
  if (path == NULL || (c = compiled(L, path)) == NULL) return 0; /* (Lua's own searcher says why) */
  if (luaL_loadbuffer(L, c->code, c->len, lua_pushfstring(L, "@%s", path)) != LUA_OK) return lua_error(L);
  lua_pushstring(L, path);
  return 2;
}

#if LUA_VERSION_NUM >= 502
#define SEARCHERS "searchers"
#else
#define SEARCHERS "loaders"
#endif

/* Puts search_compiled before Lua's file searcher (on) or takes it out. */
static void compiled_searcher(lua_State *L, int on) {
  lua_getglobal(L, "table");
  lua_getfield(L, -1, on ? "insert" : "remove");
  lua_getglobal(L, "package");
  lua_getfield(L, -1, SEARCHERS);
  lua_remove(L, -2);
  lua_pushinteger(L, 2);
  if (on) lua_pushcfunction(L, search_compiled);
  lua_call(L, on ? 3 : 2, 0);
  lua_pop(L, 1);
}

static void free_chunks(void) {
  size_t i;
  for (i = 0; i < nchunks; i++) {
    free(chunks[i].path);
    free(chunks[i].code);
  }
  free(chunks);
}

/* A state with the standard libraries and the paths of the build tree. */
static lua_State *new_state(alloc_ctx *ctx) {
  lua_State *L;
  ctx->bytes = 0;
  ctx->count = 0;
  ctx->limit = -1;
  ctx->burst = 0;
  ctx->bad_osize = 0;
  L = lua_newstate(sweep_alloc, ctx);
  assert_non_null(L);
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  /* (srcdir/?.lua: the workload's DNS server is spec.support.dns_server) */
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s/test/?.lua;%s/?.lua;", srcdir, srcdir, srcdir,
                  srcdir);
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

/* Runs code (allocation on); fails the test with N and the error if it raises. */
static void must_run(lua_State *L, const char *code, const char *what) {
  if (luaL_dostring(L, code) != LUA_OK)
    fail_msg("%s at N=%ld: %s failed: %s", current_sweep, current_n, what, lua_tostring(L, -1));
}

/* After a failed try, allocation on again: the loop must be usable. (Lua
 * 5.1 and LuaJIT leave require's loading mark in package.loaded when a
 * module's loading failed; a program clears it to require the module again,
 * and so does this check.) */
static const char CHECK_USABLE[] =
  "for k, v in pairs(package.loaded) do\n"
  "  if (k:find('^cosock') or k == 'alloc_workload') and type(v) ~= 'table' then package.loaded[k] = nil end\n"
  "end\n"
  "local cosock = require 'cosock'\n"
  "local core = require 'cosock.core'\n"
  "if W then W.cancel_all() end\n"
  "cosock.run()\n"                          /* not 'already running', nothing left to run */
  "cosock.reset()\n"
  "local st = core.stats()\n"
  "assert(st.tasks == 0 and st.ready == 0 and st.timers == 0 and st.fds == 0,\n"
  "  ('loop not empty: %d tasks, %d ready, %d timers, %d fds'):format(st.tasks, st.ready, st.timers, st.fds))\n"
  "W = W or require('alloc_workload')\n"
  "W.prepare()\n"
  "assert(W.run() == true)\n"
  "st = core.stats()\n"
  "assert(st.tasks == 0 and st.timers == 0 and st.fds == 0, 'loop not empty after a fresh workload')\n";

/* One try: setup (allocation on), then body with allocation failing after
 * n; returns whether body completed (returned true) and, in *allocs, how
 * many allocations it asked for. Then checks. */
static int try_once(long n, const char *setup, const char *body, long *allocs) {
  alloc_ctx ctx;
  fd_snapshot fds, after;
  int done, status, leaked;
  const char *msg;
  lua_State *L;
  current_n = n;
  alarm(60);
  snapshot_fds(&fds);
  L = new_state(&ctx);
  current_stage = "setup";
  compiled_searcher(L, 1);
  must_run(L, setup, "setup");
  compiled_searcher(L, 0);
  status = luaL_loadstring(L, body);
  assert_int_equal(status, LUA_OK);
  ctx.count = 0;
  ctx.burst = current_burst;
  ctx.limit = n;
  current_stage = "the body, allocation failing";
  status = lua_pcall(L, 0, 1, 0);
  ctx.limit = -1;
  *allocs = ctx.count;
  done = status == LUA_OK && lua_toboolean(L, -1);
  msg = done ? "completed" : status == LUA_OK ? "returned no true" : lua_tostring(L, -1);
  if (msg == NULL) msg = "(an error object that is not a string)";
  if (verbose) fprintf(stderr, "%s N=%ld: %s after %ld allocations\n", current_sweep, n, msg, ctx.count);
  /* The one way a try may fail is running out of memory: any other error
   * (a lost wake that timed out, a stall, 'already running') is a defect.
   * On Lua 5.4 a stack that cannot grow for want of memory makes
   * luaL_checkstack say "stack overflow (...)". */
  if (!done && !strstr(msg, "not enough memory") && !strstr(msg, "out of memory") &&
      !(LUA_VERSION_NUM >= 504 && strstr(msg, "stack overflow")))
    fail_msg("%s at N=%ld%s: failed with something else than a memory error: %s", current_sweep, n,
             current_burst ? " (two fail)" : "", msg);
  lua_settop(L, 0);
  current_stage = "the checks after it";
  compiled_searcher(L, 1);
  must_run(L, CHECK_USABLE, "the checks after the failure");
  lua_close(L);
  if (ctx.bad_osize != 0)
    fail_msg("%s at N=%ld: %ld frees or resizes gave a wrong old size", current_sweep, n, ctx.bad_osize);
  if (ctx.bytes != 0)
    fail_msg("%s at N=%ld: %zu bytes still allocated after lua_close", current_sweep, n, ctx.bytes);
  /* A socket open after lua_close belongs to no Lua object: LuaSocket's
   * accept drops the new fd when it cannot allocate the object for it (the
   * loop makes no sockets). Counted and reported, not failed on. */
  leaked = close_new_sockets(&fds);
  if (leaked) {
    leaked_sockets += leaked;
    if (verbose) fprintf(stderr, "%s N=%ld: %d socket(s) leaked outside the loop\n", current_sweep, n, leaked);
  }
  snapshot_fds(&after);
  if (after.other != fds.other)
    fail_msg("%s at N=%ld: %d non-socket fds open after lua_close, %d before", current_sweep, n,
             after.other, fds.other);
  alarm(0);
  return done;
}

/* First with every allocation after the N-th failing, for N = 0, stride,
 * 2*stride, ... until body completes. Then with only the two after the N-th
 * failing (Lua retries a failed allocation once, after a full collection),
 * so that what follows a failure runs and is checked: a body that catches
 * the error may complete, so this goes on until a try made no more than N
 * allocations (nothing failed). How many a run makes varies a little (string
 * hashes, how often a socket wait finds the socket not ready yet). */
static void sweep(const char *name, const char *setup, const char *body, long max_n) {
  int burst;
  current_sweep = name;
  for (burst = two_fail_only; burst <= 1; burst++) {
    struct timespec t0, t1;
    long n, tries = 0, completed = 0, first = -1, allocs = 0;
    current_burst = burst;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long k = 0;
    for (n = from; n <= max_n; n += stride) {
      int done;
      if (k++ % shard_n != shard_i) continue;
      done = try_once(n, setup, body, &allocs);
      tries++;
      if (!done) continue;
      completed++;
      if (first < 0) first = n;
      if (!burst || allocs <= n) break;
    }
    if (n > max_n) fail_msg("%s: did not complete within %ld allocations", name, max_n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("%s (%s): first completes at N=%ld; tried %ld values of N (stride %ld, shard %ld/%ld),"
                  " %ld completed, in %.1f s; %ld socket(s) leaked by LuaSocket\n", name,
                  burst ? "two fail" : "all fail", first, tries, stride, shard_i + 1, shard_n, completed,
                  (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, leaked_sockets);
    leaked_sockets = 0;
  }
}

/* ---- the sweeps ---------------------------------------------------------------- */

static void open_module(void **state) {
  (void)state;
  sweep("open_module", "W = nil", "return require('cosock.core') ~= nil", 100000);
}

/* Setup shared by the sweeps that act on parked tasks. */
#define PARKED_SETUP "W = require 'alloc_workload'\nW.prepare()\nW.park_some()\n"

static void reset_parked(void **state) {
  (void)state;
  sweep("reset_parked", PARKED_SETUP, "require('cosock').reset() return true", 100000);
}

static void cancel_parked(void **state) {
  (void)state;
  sweep("cancel_parked", PARKED_SETUP, "W.cancel_all() return true", 100000);
}

static void receive_in_pcall(void **state) {
  (void)state;
  sweep("receive_in_pcall", "W = require 'alloc_workload'\nW.prepare()\n",
        "return W.receive_in_pcall()", 100000);
}

static void error_handler(void **state) {
  (void)state;
  sweep("error_handler", "W = require 'alloc_workload'\nrequire 'cosock'\nW.prepare()\n",
        "return W.error_handler()", 100000);
}

/* The second mode: one or two allocations fail and the program goes on
 * (W.delivery catches each error where it comes out and runs the loop
 * again); then every message must be delivered exactly once or its send
 * reported failed, and every waiter woken by the signals that came after.
 * Only the two-fail pass (with every allocation failing the piece cannot go
 * on), every ALLOC_SWEEP_DELIVERY_STRIDE-th N (default 10 times
 * ALLOC_SWEEP_STRIDE: a few seconds; 1 for a long run). */
static void delivery(void **state) {
  long saved_stride = stride;
  int saved_two = two_fail_only;
  const char *s = getenv("ALLOC_SWEEP_DELIVERY_STRIDE");
  (void)state;
  stride = s && *s ? strtol(s, NULL, 10) : 10 * stride; /* (valgrind: ALLOC_SWEEP_STRIDE=3) */
  if (stride < 1) stride = 1;
  two_fail_only = 1;
  sweep("delivery",
        "W = require 'alloc_workload'\n"
        "require 'cosock'\n"
        "require 'cosock.signal'\n"
        "W.prepare()\n",
        "return W.delivery()", 1000000);
  stride = saved_stride;
  two_fail_only = saved_two;
}

static void workload(void **state) {
  (void)state;
  sweep("workload",
        "W = require 'alloc_workload'\n"
        "require 'cosock'\n"                  /* the Lua layer loads with allocation on */
        "W.prepare()\n",
        "return W.run()", 1000000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(open_module),
    cmocka_unit_test(workload),
    cmocka_unit_test(reset_parked),
    cmocka_unit_test(cancel_parked),
    cmocka_unit_test(receive_in_pcall),
    cmocka_unit_test(error_handler),
    cmocka_unit_test(delivery),
  };
  const char *s = getenv("ALLOC_SWEEP_STRIDE");
  srcdir = getenv("abs_top_srcdir");
  builddir = getenv("abs_top_builddir");
  if (srcdir == NULL || builddir == NULL) {
    fprintf(stderr, "alloc_sweep_test: set abs_top_srcdir and abs_top_builddir (make check does)\n");
    return 99;
  }
  if (s && *s) stride = strtol(s, NULL, 10);
  if (stride < 1) stride = 1;
  s = getenv("ALLOC_SWEEP_FROM");
  if (s && *s) from = strtol(s, NULL, 10);
  if (from < 0) from = 0;
  two_fail_only = getenv("ALLOC_SWEEP_TWO_FAIL") != NULL;
  s = getenv("ALLOC_SWEEP_SHARD");
  if (s && *s) {
    if (sscanf(s, "%ld/%ld", &shard_i, &shard_n) != 2 || shard_n < 1 || shard_i < 1 || shard_i > shard_n) {
      fprintf(stderr, "alloc_sweep_test: ALLOC_SWEEP_SHARD must be I/N with 1 <= I <= N (got '%s')\n", s);
      return 99;
    }
    shard_i--;
  }
  verbose = getenv("ALLOC_SWEEP_VERBOSE") != NULL;
  signal(SIGALRM, on_alarm);
  s = getenv("ALLOC_SWEEP_ONLY");              /* one sweep by name (a long run of one) */
  if (s && *s) cmocka_set_test_filter(s);
  {
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free_chunks();
    return failed;
  }
}
