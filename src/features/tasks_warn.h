/* tasks_warn: the C side of cosock.tasks (lua/cosock/tasks.lua): when each
 * task's last turn began and ended (for the dump's "since"), and the
 * warnings in the style of tokio-console (a long turn, a long wait in the
 * ready batch, a task that ended, for the leftover check, and the idle
 * check for waits nothing can wake). tasks_warn.c owns loop->taskrec (NULL
 * until cosock.tasks is first loaded); its hook's points are on only while
 * that module is loaded (the stamps) and while a warning is on. */
#ifndef COSOCK_TASKS_WARN_H
#define COSOCK_TASKS_WARN_H

#include "compat.h"

#include "loop.h"

/* At load: registers the hook (its points off). */
void cn_taskrec_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "tasks", by cosock.tasks): adds tasks_list,
 * tasks_warn, tasks_stamps, tasks_unbounded and tasks_site to the module on
 * top (the loop below it), and turns the stamps on. */
void cn_taskrec_open(lua_State *L, cn_loop *lp);

#endif
