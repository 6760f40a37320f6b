/* handle: the thread handles that cosock.spawn returns (handle.c). */
#ifndef COSOCK_HANDLE_H
#define COSOCK_HANDLE_H

#include <stdint.h>

#include <lua.h>

#include "loop.h"

/* Pushes a handle of the task in slot with that serial, named by the value
 * at index name. */
void cn_handle_push(lua_State *L, cn_loop *lp, int slot, uint64_t serial, int name);
/* Makes the loop's handle metatable (the loop on top of the stack). */
void cn_handle_open(lua_State *L);
void cn_handle_free(lua_State *L, cn_loop *lp);

#endif
