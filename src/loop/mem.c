/* mem: the loop's C memory from the Lua state's allocator (see mem.h). */
#include "config.h"

#include "mem.h"

void cn_mem_init(cn_mem *m, lua_State *L) {
  m->f = lua_getallocf(L, &m->ud);
}

void *cn_mem_resize(const cn_mem *m, void *p, size_t osize, size_t nsize) {
  /* A new block's osize is a type code for Lua's own objects: 0, none. */
  return m->f(m->ud, p, p ? osize : 0, nsize);
}

void cn_mem_free(const cn_mem *m, void *p, size_t osize) {
  if (p) m->f(m->ud, p, osize, 0);
}
