/* wrapper: receive, send and wait of the project's socket wrappers (wrapper.c). */
#ifndef COSOCK_WRAPPER_H
#define COSOCK_WRAPPER_H

#include "compat.h"

/* Adds receive, send and wait to the module table on top (the loop just
 * below it). */
void cn_wrapper_open(lua_State *L);

#endif
