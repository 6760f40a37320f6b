/* loop_core: the loop core (src/loop/), the pass and what it stands on. It
 * names no feature: features attach through hooks.h.
 *
 *   loop.h          the state of one loop (cn_loop), and which file owns
 *                   each part of it
 *   run.c, run.h    cosock.run: one pass after another (one_pass, the only
 *                   place a pass happens); a task's end and error
 *   task.c, task.h  task slots, the ready and wake lists, the timer heap
 *   park.c, park.h  yields, wakers, taking a task out of its wait
 *   waiters.c, .h   the waiter index: which task or object waits on which
 *                   fd; the poller
 *   hooks.c, .h     the interface features attach through: the fixed points
 *                   of a pass, the questions the core asks
 *   mem.c, mem.h    the loop's C memory, from the Lua state's allocator
 *   current_task.c  which task runs now; the error of a wait made outside
 *                   any task
 *   messages.h      the fixed words of errors and results (cosock.core.messages)
 *                   and cn_argerror, the form of a "bad argument" error
 *
 * What belongs here (scripts/check-layers.sh checks the first): files that
 * include headers of this folder, src/compat/ and src/lib/ only, and
 * without which no pass can run. What a program may do without (timers,
 * predicates, accounting, lookups, channels, ...) is a feature
 * (src/features/). */
#ifndef COSOCK_LOOP_CORE_H
#define COSOCK_LOOP_CORE_H

#include "current_task.h"
#include "hooks.h"
#include "loop.h"
#include "mem.h"
#include "messages.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "waiters.h"

#endif
