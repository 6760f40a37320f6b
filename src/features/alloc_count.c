/* alloc_count: the counting allocator (see alloc_count.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* dladdr, RTLD_NODELETE (glibc) */
#endif
#include "config.h"

#include <dlfcn.h>

#include "alloc_count.h"

/* As lua_Alloc. Frees and shrinks pass straight through; a new block counts
 * its size, a grown one what it grew by (nothing counts when that fails). */
static void *count_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  cn_alloc_count *a = ud;
  void *r;
  if (nsize == 0) {
    if (p != NULL && p == a->last) {           /* lua_close's last free */
      /* Our record goes first, while everything below is still there: a
       * wrapper stacked on ours that does the same is then safe too. */
      lua_Alloc f = a->f;
      void *fud = a->ud;
      f(fud, a, sizeof *a, 0);
      return f(fud, p, osize, 0);
    }
    return a->f(a->ud, p, osize, 0);
  }
  r = a->f(a->ud, p, osize, nsize);
  if (p == NULL) osize = 0;                    /* (osize is then a type code) */
  if (r != NULL && nsize > osize) a->bytes += nsize - osize;
  return r;
}

/* What a state whose allocator cannot be wrapped counts: nothing. */
static cn_alloc_count uncounted;

/* The state keeps calling count_alloc after lua_close has unloaded this
 * module (package's __gc of its C libraries comes before the last frees),
 * so the module's code must stay mapped for the life of the process: it is
 * made undeletable. 0 when it is, or when it is no shared object at all
 * (linked into the program); -1 when that cannot be done. */
static int pin_module(void) {
  Dl_info info;
  void *h;
  if (dladdr((void *)count_alloc, &info) == 0 || info.dli_fname == NULL) return -1;
  h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  if (h == NULL) return -1;
  dlclose(h);                                  /* (the mark stays: only a count drops) */
  return 0;
}

cn_alloc_count *cn_alloc_count_install(lua_State *L) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  cn_alloc_count *a;
  lua_State *main;
  if (f == count_alloc) return ud;             /* the module was loaded before */
  if (pin_module() != 0) return &uncounted;    /* no wrapper, rather than a crash at exit */
  a = f(ud, NULL, 0, sizeof *a);               /* (a new block: osize 0, no Lua type) */
  if (a == NULL) return NULL;
  a->f = f;
  a->ud = ud;
  a->bytes = 0;
  cn_push_main_thread(L);
  main = lua_tothread(L, -1);
  lua_pop(L, 1);
  if (main == NULL) {                          /* 5.1/LuaJIT, opened off the main thread */
    f(ud, a, sizeof *a, 0);
    return &uncounted;
  }
  /* lua_newstate allocates the main thread with its extra space in front
   * (5.3, 5.4; none before) and one block for the state; lua_close frees
   * that block last. */
#if LUA_VERSION_NUM >= 503
  a->last = lua_getextraspace(main);
#else
  a->last = main;
#endif
  lua_setallocf(L, count_alloc, a);
  return a;
}
