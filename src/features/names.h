/* names: where each task was spawned, and the line a task's error gains
 * to name it (a hook's task_line, hooks.h). The core names tasks and
 * objects itself (cn_push_label, cn_push_object_name: task.h). */
#ifndef CN_NAMES_H
#define CN_NAMES_H

#include "hooks.h"
#include "loop.h"

/* Attaches the hook (hooks.h): the line a task's error gains; the files
 * are let go with the loop. */
void cn_sites_open(lua_State *L, cn_loop *lp);

/* The file and line of the call that spawned a task: the caller of the Lua
 * function that called core.spawn (cosock.spawn, or a library function such
 * as cosock.timer.every). Stores the line in *line and returns the file's
 * number (0: not known). May raise (memory) the first time a file is seen:
 * call it before anything is taken. */
int cn_site_here(lua_State *L, cn_loop *lp, int *line);
/* Pushes "file:line" for a site, or nil when it is not known. */
void cn_site_push(lua_State *L, cn_loop *lp, int site, int line);

#endif
