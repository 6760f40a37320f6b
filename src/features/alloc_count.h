/* alloc_count: a counting wrapper around the Lua state's allocator, so that
 * the loop can tell how many bytes were handed out while a task ran
 * (accounting.h takes the differences). Installed once per state, when
 * set_accounting(true) is first called (lua_setallocf), and never taken out:
 * it wraps whatever allocator the state had then (the blocks made before
 * go back to it through the wrapper), and another library may wrap it in
 * turn.
 * Its record lives as long as the state: lua_close's very last call is the
 * free of the main thread's block, and just before passing that call on the
 * wrapper frees its record through the allocator it wraps. (A wrapper
 * stacked on this one must not call it after that last free; one that frees
 * its own record the same way, before passing the last free on, is fine.) */
#ifndef COSOCK_ALLOC_COUNT_H
#define COSOCK_ALLOC_COUNT_H

#include <stdint.h>

#include "compat.h"

typedef struct cn_alloc_count {
  lua_Alloc f;          /* the allocator wrapped */
  void *ud;
  const void *last;     /* the main thread's block: lua_close frees it last */
  uint64_t bytes;       /* handed out so far: new blocks, and what grown blocks grew by */
} cn_alloc_count;

/* The counter of L's state: installs the wrapper, or finds the one a
 * previous load of the module installed (when it is still the state's
 * allocator). NULL when memory is exhausted; then nothing changed. When the
 * module cannot be kept loaded until the process ends (the state calls the
 * wrapper after lua_close unloaded the module), nothing is wrapped and the
 * counter returned stays at 0. */
cn_alloc_count *cn_alloc_count_install(lua_State *L);

#endif
