/* mem: the loop's own C memory (task slots and structs, wait arrays, per-fd
 * arrays) comes from the allocator of the Lua state that loaded the module,
 * as Lua's own does. An application that limits or counts its Lua memory
 * with its own allocator then covers the loop too, and a failing allocator
 * reaches these allocations (test/alloc_sweep_test.c sweeps them). The
 * poller and the timer heap (no Lua there) keep malloc. */
#ifndef COSOCK_MEM_H
#define COSOCK_MEM_H

#include <stddef.h>

#include "compat.h"

typedef struct cn_mem {
  lua_Alloc f;
  void *ud;
} cn_mem;

/* The allocator of L's state, read once when the loop is made. */
void cn_mem_init(cn_mem *m, lua_State *L);
/* Resizes block p of osize bytes to nsize (as lua_Alloc: p NULL makes a new
 * block, nsize 0 frees it and returns NULL). Returns NULL when memory is
 * exhausted and nsize > 0; p is then unchanged. Shrinking never fails. */
void *cn_mem_resize(const cn_mem *m, void *p, size_t osize, size_t nsize);
/* Frees block p of osize bytes (p may be NULL). */
void cn_mem_free(const cn_mem *m, void *p, size_t osize);

#endif
