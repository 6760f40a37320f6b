/* current_task: which task the loop is running, for Lua libraries (cosock.op). */
#ifndef CN_CURRENT_TASK_H
#define CN_CURRENT_TASK_H

#include "compat.h"

int cn_current_task(lua_State *L);            /* core.current_task */

#endif
