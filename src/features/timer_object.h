/* timer_object: the timer objects of cosock.timer (create_oneshot,
 * create_interval), which ride the loop's timer heap (timer_object.c owns
 * loop->timers). Its hook (hooks.h) delivers the timers that came due
 * (CN_AT_TIMERS, on while some wait to be delivered), holds the loop
 * from stalling while a pending timer has a waker, and at reset makes every
 * timer made so far dead. */
#ifndef COSOCK_TIMER_OBJECT_H
#define COSOCK_TIMER_OBJECT_H

#include "compat.h"

#include "hooks.h"
#include "loop.h"

/* The registry reference of this loop's timer metatable, 0 before
 * cosock.timer is first opened (a wait's object is a timer object when its
 * metatable is that one: the trace asks). */
static inline int cn_tobj_mt_ref(const cn_loop *lp) { return lp->timers.r_mt; }
/* At load: the anchor of the timers a task waits on, and the hook. */
void cn_tobj_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "timer"): adds timer_oneshot, timer_interval,
 * timer_info, timer_methods and grid_next to the module table on top (the
 * loop just below it), and makes this loop's timer metatable. */
void cn_tobj_open(lua_State *L, cn_loop *lp);

#endif
