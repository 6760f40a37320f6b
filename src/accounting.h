/* accounting: what each task and the loop cost (accounting.c owns
 * loop->acct; the counters of a task, in task.h, are written by run.c
 * through the inline functions here).
 *
 * Always counted: each task's resumes, the loop's passes and polls. While
 * set_accounting(true) is in force, also the time and the bytes allocated:
 * run.c puts a mark at the start of each task's turn (resume_one), where a
 * task ends, after the last turn of each pass and around each poll. What
 * happened between two marks belongs to the owner named at the first: the
 * task whose turn it was, or the loop. A task's turn covers taking it out
 * of its wait, running it until it yields, and parking it on what it
 * yielded (the setwaker calls of its objects). A mark reads the monotonic
 * clock once (so one read per resume, and one or three per pass) and the
 * byte count of the state's allocator, which the first set_accounting(true)
 * wraps (alloc_count.h). Off, a mark is one test. */
#ifndef COSOCK_ACCOUNTING_H
#define COSOCK_ACCOUNTING_H

#include <stdint.h>
#include <time.h>

#include "compat.h"

#include "alloc_count.h"
#include "task.h"

/* The monotonic clock in nanoseconds (clock_gettime: the vDSO on Linux). */
static inline int64_t cn_acct_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A mark: what happened since the last one goes to its owner, and `to`
 * (a task, or NULL for the loop) owns what follows. */
static inline void cn_acct_mark(cn_loop *lp, cn_task *to) {
  if (lp->acct.on) {
    cn_task *o = lp->acct.owner;
    uint64_t bytes = lp->acct.alloc->bytes;
    int64_t now = cn_acct_now();
    if (o) {
      o->busy_ns += now - lp->acct.mark_ns;
      o->allocated += bytes - lp->acct.mark_bytes;
    } else {
      lp->acct.loop_ns += now - lp->acct.mark_ns;
    }
    lp->acct.mark_ns = now;
    lp->acct.mark_bytes = bytes;
    lp->acct.owner = to;
  }
}

/* run() starts: the loop owns what follows. */
static inline void cn_acct_run_begin(cn_loop *lp) {
  lp->acct.owner = NULL;
  if (lp->acct.on) {
    lp->acct.mark_ns = cn_acct_now();
    lp->acct.mark_bytes = lp->acct.alloc->bytes;
  }
}

/* The task whose turn it was is gone without a mark (dropped before it
 * was resumed): what followed its mark goes to the loop. */
static inline void cn_acct_disown(cn_loop *lp) { lp->acct.owner = NULL; }

/* A pass begins. */
static inline void cn_acct_pass(cn_loop *lp) { lp->acct.passes++; }

/* The pass's resumes are done: the last task's turn ends here. */
static inline void cn_acct_resumes_done(cn_loop *lp) {
  if (lp->acct.on && lp->acct.owner) cn_acct_mark(lp, NULL);
}

/* Around a poll: the time in the poller (its wait and the wakes it hands
 * out) is nobody's busy time. */
static inline void cn_acct_poll_begin(cn_loop *lp) {
  lp->acct.polls++;
  cn_acct_mark(lp, NULL);
}
static inline void cn_acct_poll_end(cn_loop *lp) {
  if (lp->acct.on) {
    lp->acct.mark_ns = cn_acct_now();
    lp->acct.mark_bytes = lp->acct.alloc->bytes;
  }
}

/* Adds set_accounting to the module table on top. */
void cn_acct_open(lua_State *L);
/* For reset: the loop's totals start again from zero. */
void cn_acct_reset(cn_loop *lp);
/* Sets resumes and (while on) busy and allocated in the table on top for t. */
void cn_acct_push_task(lua_State *L, cn_loop *lp, cn_task *t);
/* Sets parked, passes, polls and (while on) busy in the stats table on top. */
void cn_acct_push_stats(lua_State *L, cn_loop *lp);

#endif
