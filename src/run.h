/* run: cosock.run, the passes of the run loop (run.c owns loop->run). */
#ifndef COSOCK_RUN_H
#define COSOCK_RUN_H

#include "compat.h"

#include "task.h"

int cn_run(lua_State *L);
/* One pass for cosock.step (step.c), waiting at most cap seconds (< 0: no
 * limit); pushes whether tasks remain. Raises as run raises, loop recovered. */
int cn_run_step(lua_State *L, cn_loop *lp, double cap);
/* Adds set_stall_hook to the module table on top (the loop just below it). */
void cn_run_open(lua_State *L, cn_loop *lp);
void cn_run_free(lua_State *L, cn_loop *lp);
/* Forgets the error handler (for reset). Cannot fail. */
void cn_run_reset(lua_State *L, cn_loop *lp);

static inline int cn_running(const cn_loop *lp) { return lp->run.running; }
/* Whether the last pass resumed t (for the stall dump's "woken in last turn"). */
static inline int cn_woken_last_pass(const cn_loop *lp, const cn_task *t) {
  return t->last_wake >= 0 && t->last_pass == lp->run.pass;
}
/* The slot the loop is resuming, -1 when none. */
static inline int cn_current_slot(const cn_loop *lp) { return lp->run.current; }
/* The task whose own coroutine L is, while the loop resumes it; NULL in a
 * coroutine the task resumes itself, or outside the loop. */
static inline cn_task *cn_own_task(cn_loop *lp, lua_State *L) {
  return lp->run.current_co == L ? cn_task_get(lp, lp->run.current) : NULL;
}

#endif
