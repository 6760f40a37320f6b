/* timer_object: the timer objects of cosock.timer (create_oneshot,
 * create_interval), which ride the loop's timer heap (timer_object.c owns
 * loop->timers). */
#ifndef COSOCK_TIMER_OBJECT_H
#define COSOCK_TIMER_OBJECT_H

#include "compat.h"

#include "loop.h"

/* At load: the anchor of the timers a task waits on. */
void cn_tobj_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "timer"): adds timer_oneshot, timer_interval,
 * timer_info, timer_methods and grid_next to the module table on top (the
 * loop just below it), and makes this loop's timer metatable. */
void cn_tobj_open(lua_State *L, cn_loop *lp);
/* reset(): every timer made so far is dead (acts as cancelled) and loses its
 * waker; the table at index tbl (new, empty) becomes the anchor table.
 * Cannot fail. Call after cn_tasks_reset. */
void cn_tobj_reset(lua_State *L, cn_loop *lp, int tbl);
void cn_tobj_free(lua_State *L, cn_loop *lp);

/* True while a pending timer has a waker set (it can still wake someone). */
static inline int cn_tobj_waited(const cn_loop *lp) { return lp->timers.nwaited > 0; }
/* True when timers came due (in cn_timers_run) with a waker set. */
static inline int cn_tobj_due(const cn_loop *lp) { return lp->timers.due != NULL; }
/* Calls the waker of each of those timers (taking it off first). A waker's
 * error propagates; the timers not reached stay listed. */
void cn_tobj_deliver(lua_State *L, cn_loop *lp);

#endif
