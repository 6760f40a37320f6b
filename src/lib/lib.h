/* lib: the Lua-free engine (src/lib/), what the loop stands on. No Lua
 * header here, no allocation behind the caller's back; test/ tests each
 * piece alone with cmocka.
 *
 *   clock.h       the monotonic clock of the loop's timers
 *   timer_heap.h  a min-heap of deadlines with O(log n) insert and cancel
 *   grid.h        the ticks of a fixed-rate schedule (interval timers)
 *   poller.h      interest in fds behind one interface; select and epoll
 *                 backends (poller_select.c, poller_epoll.c)
 *   chan_line.h   the line of senders waiting on a full channel
 *   ready_list.h  an intrusive FIFO of items ready to be handed on (the
 *                 resolver's ended lookups, the timer objects come due)
 *
 * What belongs here (scripts/check-layers.sh checks the first two): code
 * that includes no Lua header and nothing of src/compat/, src/loop/ or
 * src/features/, and that the loop or a feature could use as it is. */
#ifndef COSOCK_LIB_H
#define COSOCK_LIB_H

#include "lib/chan_line.h"
#include "lib/clock.h"
#include "lib/grid.h"
#include "lib/poller.h"
#include "lib/ready_list.h"
#include "lib/timer_heap.h"

#endif
