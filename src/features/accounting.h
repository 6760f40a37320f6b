/* accounting: what each task and the loop cost (accounting.c owns
 * loop->acct, with each task's busy time and bytes in its own array by
 * slot: a program that never turns accounting on pays nothing per task).
 *
 * Always counted, by the core: each task's resumes, the loop's passes and
 * polls (run.c). While set_accounting(true) is in force, also the time and
 * the bytes allocated: this feature's hook puts a mark at the core's fixed
 * points (hooks.h): the start of each task's turn, where a task ends, after
 * the last turn of each pass and around each poll. What
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
#include "hooks.h"
#include "task.h"

/* The monotonic clock in nanoseconds (clock_gettime: the vDSO on Linux). */
static inline int64_t cn_acct_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A task's counts: an entry of loop->acct.per, the task's while co is its
 * coroutine (an entry left by an earlier task of the slot is zeroed when the
 * new one's turn first comes while accounting is on). co is NULL once its
 * task went (accounting.c's forget, and reset): a coroutine's address may
 * be a collected one's, so it names a task only while the task lives. */
typedef struct cn_acct_task {
  int64_t busy_ns;
  uint64_t allocated;
  const void *co;
} cn_acct_task;

/* t's entry, or NULL when none was made for its slot (no memory). */
static inline cn_acct_task *cn_acct_of(cn_loop *lp, const cn_task *t) {
  cn_acct_task *a = t->slot < lp->acct.cap ? &lp->acct.per[t->slot] : NULL;
  return a != NULL && a->co == t->co ? a : NULL;
}

/* When the turn under way began as accounting saw it (its CN_AT_TURN mark)
 * while accounting is on; else the clock now (the watchdog's start). */
static inline int64_t cn_acct_mark_or_now(const cn_loop *lp) {
  return lp->acct.on ? lp->acct.mark_ns : cn_acct_now();
}

/* A mark: what happened since the last one goes to its owner, and `to`
 * (a task, or NULL for the loop) owns what follows. */
static inline void cn_acct_mark(cn_loop *lp, cn_task *to) {
  if (lp->acct.on) {
    cn_task *o = lp->acct.owner;
    uint64_t bytes = lp->acct.alloc->bytes;
    int64_t now = cn_acct_now();
    if (o) {
      cn_acct_task *a = cn_acct_of(lp, o);
      if (a != NULL) {
        a->busy_ns += now - lp->acct.mark_ns;
        a->allocated += bytes - lp->acct.mark_bytes;
      }
    } else {
      lp->acct.loop_ns += now - lp->acct.mark_ns;
    }
    lp->acct.mark_ns = now;
    lp->acct.mark_bytes = bytes;
    lp->acct.owner = to;
  }
}

/* Adds set_accounting to the module table on top (the loop just below it)
 * and attaches the hook. */
void cn_acct_open(lua_State *L, cn_loop *lp);
/* Sets resumes and (while on) busy and allocated in the table on top for t. */
void cn_acct_push_task(lua_State *L, cn_loop *lp, cn_task *t);
/* Sets parked, passes, polls and (while on) busy in the stats table on top. */
void cn_acct_push_stats(lua_State *L, cn_loop *lp);

#endif
