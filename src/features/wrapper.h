/* wrapper: receive, send and wait of the project's socket wrappers (wrapper.c). */
#ifndef COSOCK_WRAPPER_H
#define COSOCK_WRAPPER_H

#include "compat.h"

#include "loop.h"

/* Adds receive, send and wait to the module table on top (the loop lp just
 * below it), and gives the loop LuaSocket's fd reader (cn_ls_fd). */
void cn_wrapper_open(lua_State *L, cn_loop *lp);

#endif
