/* wakers: what the Lua layer may ask about the loop's wakers (wakers.c). */
#ifndef COSOCK_WAKERS_H
#define COSOCK_WAKERS_H

#include "compat.h"

/* Adds waker_stale to the module table on top (the loop just below it). */
void cn_wakers_open(lua_State *L);

#endif
