/* metadata: cosock.get_thread_metadata (metadata.c). */
#ifndef COSOCK_METADATA_H
#define COSOCK_METADATA_H

#include "compat.h"

#include "loop.h"

struct cn_task;

int cn_get_thread_metadata(lua_State *L);
int cn_thread_states(lua_State *L);
/* Pushes the list of what t waits on, as thread_states' `waits` (for
 * cosock.tasks too: tasks_warn.c). */
void cn_push_task_waits(lua_State *L, cn_loop *lp, struct cn_task *t);

#endif
