/* clock: the monotonic time source of the run loop's timers, and the
 * virtual clock of cosock.sim. */
#ifndef COSOCK_CLOCK_H
#define COSOCK_CLOCK_H

/* Seconds since an arbitrary fixed point; never jumps with the wall clock.
 * While the virtual clock is on, its time instead (it moves only when
 * cn_clock_advance moves it). */
double cn_clock_now(void);
/* Turns the virtual clock of this thread on at time now, or off (on 0). */
void cn_clock_virtual(int on, double now);
/* Whether the virtual clock is on in this thread. */
int cn_clock_is_virtual(void);
/* Moves the virtual clock forward to t; never back; nothing while it is off. */
void cn_clock_advance(double t);

#endif
