/* embed: cosock.pollfd, one descriptor a host loop watches for the loop's
 * work (embed.c). */
#ifndef COSOCK_EMBED_H
#define COSOCK_EMBED_H

#include "compat.h"

#include "loop.h"

/* pollfd() -> fd (a Lua function with the loop as upvalue 1). */
int cn_embed_pollfd(lua_State *L);
/* Once pollfd was asked for: watches the loop's current poller again and
 * arms the descriptor's timer for run.c's cn_next_timeout. Does nothing
 * otherwise. */
void cn_embed_sync(lua_State *L, cn_loop *lp);

#endif
