/* handle: the thread handles that cosock.spawn returns (handle.c). */
#ifndef COSOCK_HANDLE_H
#define COSOCK_HANDLE_H

#include <lua.h>

#include "loop.h"

/* Pushes a new handle for the task of the coroutine at index co, named by
 * the value at index name (may raise: nothing is taken yet). */
void cn_handle_push(lua_State *L, cn_loop *lp, int name, int co);
/* Makes the loop's handle metatable (the loop on top of the stack). */
void cn_handle_open(lua_State *L);
void cn_handle_free(lua_State *L, cn_loop *lp);

#endif
