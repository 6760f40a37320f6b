/* cancel: cancellation that cleans up, for cosock.scope (cancel.c owns the
 * cancel fields of each task: the bits of hooked, and loop->cancel: each
 * scope task's deadline). */
#ifndef COSOCK_CANCEL_H
#define COSOCK_CANCEL_H

#include "compat.h"

#include "loop.h"
#include "task.h"

/* The bits cancel.c keeps in a task's hooked byte (task.h). CN_BY_HANDLE:
 * a handle:cancel() came (handle.c), also when the task was cancelled by its
 * scope already; scope_mark reports it, so that cosock.scope never takes it
 * for its own scope's cancellation. */
enum { CN_SCOPED = 1, CN_CANCELLED = 2, CN_BY_HANDLE = 4 };

/* Whether t is a scope's task that is cancelled or past its deadline: a
 * timer that wakes it now ends its wait by the cancellation (the trace's
 * wake cause). */
int cn_cancel_due(const cn_loop *lp, const cn_task *t);

/* Whether the value at idx is the cancellation value. */
int cn_is_cancellation(lua_State *L, int idx);

/* Adds scope_mark, task_alive and cancelled to the module table on top (the
 * loop just below it), and registers the hook: a scope's task is `hooked`
 * (task.h), so the core asks it the task questions (hooks.h): wait_cap (its
 * cancel or deadline caps every wait), checkpoint (a cancelled or expired
 * task raises instead of waiting, and where a wait ends timed out), raised
 * (its scope has its error, not the handler), cancel (handle:cancel() asks
 * for its cleanup instead of dropping it). */
void cn_cancel_open(lua_State *L, cn_loop *lp);

#endif
