/* run: cosock.run, the passes of the run loop (run.c owns loop->run). */
#ifndef COSOCK_RUN_H
#define COSOCK_RUN_H

#include "compat.h"

#include "task.h"

int cn_run(lua_State *L);
/* One pass for cosock.step (step.c), waiting at most cap seconds (< 0: no
 * limit); pushes whether tasks remain. Raises as run raises, loop recovered. */
int cn_run_step(lua_State *L, cn_loop *lp, double cap);
/* Seconds until the loop needs a pass: 0 when something is ready, -1 when
 * no deadline is armed (only an fd or code outside the loop can give it
 * work) or nothing is left. For cosock.next_timeout and pollfd's timer. */
double cn_next_timeout(cn_loop *lp);
/* Adds run, set_stall_hook, set_error_handler and blocked_on_closed to the
 * module table on top (the loop just below it). */
void cn_run_open(lua_State *L, cn_loop *lp);
void cn_run_free(lua_State *L, cn_loop *lp);
/* For reset: forgets the error handler, the counts of passes and polls and
 * a block on a closed socket. Cannot fail. */
void cn_run_reset(lua_State *L, cn_loop *lp);

static inline int cn_running(const cn_loop *lp) { return lp->run.running; }

/* C code outside run that calls Lua while it holds loop state (a task half
 * cancelled) marks itself busy around those calls, which must then be
 * protected (lua_pcall): reset and run, which would free or move that state
 * under it, are refused meanwhile (cn_refuse_busy). Inside run, run's own
 * flag refuses them. Returns the previous mark, for cn_busy_end. */
typedef struct cn_busy { const char *what; int slot; } cn_busy;
static inline cn_busy cn_busy_begin(cn_loop *lp, const char *what, int slot) {
  cn_busy was;
  was.what = lp->run.busy;
  was.slot = lp->run.busy_slot;
  lp->run.busy = what;
  lp->run.busy_slot = slot;
  return was;
}
static inline void cn_busy_end(cn_loop *lp, cn_busy was) {
  lp->run.busy = was.what;
  lp->run.busy_slot = was.slot;
}
/* Raises "fname: cannot <verb> inside <what> (task 'name')" while a busy
 * mark is set; returns otherwise. */
void cn_refuse_busy(lua_State *L, cn_loop *lp, const char *fname, const char *verb);
/* Whether the last pass resumed t (for the stall dump's "woken in last turn"). */
static inline int cn_woken_last_pass(const cn_loop *lp, const cn_task *t) {
  return t->last_wake >= 0 && t->last_pass == lp->run.pass;
}
/* The number of the pass under way (wraps; compare for equality only). */
static inline unsigned cn_pass_number(const cn_loop *lp) { return lp->run.pass; }
/* Whether this pass resumed tasks (for the hooks at CN_AT_RESUMES_DONE). */
static inline int cn_pass_ran(const cn_loop *lp) { return lp->run.ran; }
/* The passes and the polls since load or reset (stats). */
static inline uint64_t cn_run_passes(const cn_loop *lp) { return lp->run.passes; }
static inline uint64_t cn_run_polls(const cn_loop *lp) { return lp->run.polls; }
/* (Which task the loop resumes: task.h, cn_current_slot and cn_own_task.) */

#endif
