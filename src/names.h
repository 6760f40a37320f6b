/* names: how errors name tasks and objects: where each task was spawned,
 * and what an object is. */
#ifndef CN_NAMES_H
#define CN_NAMES_H

#include "loop.h"

/* The file and line of the call that spawned a task: the caller of the Lua
 * function that called core.spawn (cosock.spawn, or a library function such
 * as cosock.timer.every). Stores the line in *line and returns the file's
 * number (0: not known). May raise (memory) the first time a file is seen:
 * call it before anything is taken. */
int cn_site_here(lua_State *L, cn_loop *lp, int *line);
/* Pushes "file:line" for a site, or nil when it is not known. */
void cn_site_push(lua_State *L, cn_loop *lp, int site, int line);
void cn_sites_free(lua_State *L, cn_loop *lp);
/* Pushes a short description of the object at idx for an error: its
 * tostring (no metamethods run), after its class when it is a socket wrapper
 * ("tcp{client} table: 0x..."). */
void cn_push_object_name(lua_State *L, int idx);

#endif
