/* step: cosock.step and cosock.next_timeout, the loop driven one pass at a
 * time by code outside it (step.c); embed.c adds the descriptor to watch. */
#ifndef COSOCK_STEP_H
#define COSOCK_STEP_H

#include "compat.h"

#include "loop.h"

/* Seconds until the loop needs a pass: 0 when something is ready, -1 when
 * no deadline is armed (only an fd or code outside the loop can give it
 * work) or nothing is left. */
double cn_next_timeout(cn_loop *lp);
/* Adds step, next_timeout and pollfd to the module table on top (the loop
 * just below it). */
void cn_step_open(lua_State *L);

#endif
