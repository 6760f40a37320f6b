/* step: cosock.step and cosock.next_timeout, the loop driven one pass at a
 * time by code outside it (step.c); embed.c adds the descriptor to watch. */
#ifndef COSOCK_STEP_H
#define COSOCK_STEP_H

#include "compat.h"

#include "loop.h"

/* Adds step, next_timeout, pollfd and task_handles to the module table on
 * top (the loop just below it). */
void cn_step_open(lua_State *L);

#endif
