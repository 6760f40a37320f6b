/* clock: the monotonic time source of the run loop's timers. */
#ifndef COSOCK_CLOCK_H
#define COSOCK_CLOCK_H

/* Seconds since an arbitrary fixed point; never jumps with the wall clock. */
double cn_clock_now(void);

#endif
