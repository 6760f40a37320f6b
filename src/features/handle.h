/* handle: the thread handles that cosock.spawn returns (handle.c). */
#ifndef COSOCK_HANDLE_H
#define COSOCK_HANDLE_H

#include "compat.h"

#include "hooks.h"
#include "loop.h"
#include "task.h"


/* Pushes a new handle named by the value at index name, for the coroutine
 * at index co, whose task has no slot yet (may raise: nothing is taken yet). */
void cn_handle_push(lua_State *L, cn_loop *lp, int name, int co);
/* Maps the handle at index handle to the value at index v: its task's slot
 * (an integer, task.c when the task takes it), or the coroutine once the
 * task ended (task.c, when it frees the slot). The handle's key exists
 * (made by cn_handle_push): cannot fail, allocates nothing. */
void cn_handle_map(lua_State *L, cn_loop *lp, int handle, int v);
/* Makes the loop's handle metatable (the loop on top of the stack) and
 * attaches the hook (hooks.h): a task's end (cn_handle_finish) and a handle
 * for a task whose own was dropped (cn_handle_push). */
void cn_handle_open(lua_State *L);
int cn_handle_is_self(lua_State *L);          /* core.handle_is_self */
/* The live task behind the handle at index idx, or NULL (any other value). */
cn_task *cn_handle_task(lua_State *L, cn_loop *lp, int idx);

/* The task whose handle is at index handle (nil when the program dropped
 * it: then nothing happens) ended: keeps how, with the n values from index
 * first (its results, or its error), for join, and wakes what waits on the
 * handle (errors of those calls propagate). */
void cn_handle_finish(lua_State *L, cn_loop *lp, int handle, int how, int first, int n);

#endif
