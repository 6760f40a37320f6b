/* grid: the ticks of a fixed-rate schedule, origin + k * period (k = 1, 2,
 * ...). Used by the interval timers and timer.every: each tick is computed
 * from the origin, never from the previous wake, so lateness does not
 * accumulate, and ticks that passed while nobody looked are skipped. No Lua. */
#ifndef COSOCK_GRID_H
#define COSOCK_GRID_H

/* The index k of the first tick after tick `last` that lies after `now`:
 * k > last and origin + k * period > now. period must be > 0 and every
 * argument finite. When the double arithmetic cannot tell ticks apart any
 * more (a period far below the clock's resolution), it gives up after a few
 * steps and returns a k > last that may not be after now: the caller never
 * loops forever. */
double grid_next(double origin, double period, double last, double now);

#endif
