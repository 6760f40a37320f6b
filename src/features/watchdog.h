/* watchdog: cosock.set_watchdog (watchdog.c owns loop->wd). While a watchdog
 * is set, its hook (hooks.h: CN_AT_RESUME, CN_AT_RESUMED) has each task's
 * coroutine carry a count hook for the length of its resume; every CN_WD_COUNT instructions the hook reads the monotonic
 * clock, and a task that ran past the limit since its resume began is
 * reported, and with the "error" action interrupted by an error raised where
 * it runs. Between resumes the coroutine has the hook the program gave it. */
#ifndef COSOCK_WATCHDOG_H
#define COSOCK_WATCHDOG_H

#include "compat.h"

#include "loop.h"

/* Instructions between two looks at the clock: a look costs about one clock
 * read (some 30 ns), a thousand instructions a few microseconds. */
#define CN_WD_COUNT 1000

void cn_wd_watch_(cn_loop *lp, lua_State *co);
void cn_wd_unwatch_(cn_loop *lp);

/* Just before lua_resume(co) of a predicate the loop calls (predicate.c) for the task at
 * slot, which a report names; nothing when a task is being watched. */
static inline void cn_wd_watch_for(cn_loop *lp, lua_State *co, int slot) {
  if (lp->wd.limit_ns && lp->wd.co == NULL) {
    cn_wd_watch_(lp, co);
    lp->wd.slot = slot;
  }
}
/* ... and just after it returns. */
static inline void cn_wd_unwatch(cn_loop *lp) {
  if (lp->wd.co) cn_wd_unwatch_(lp);
}

/* Adds set_watchdog and watchdog_library to the module table on top (the
 * loop just below it) and attaches the hook. */
void cn_wd_open(lua_State *L, cn_loop *lp);

#endif
