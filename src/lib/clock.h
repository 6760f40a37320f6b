/* clock: the monotonic time source of the run loop's timers, and the
 * virtual clock of cosock.sim. */
#ifndef COSOCK_CLOCK_H
#define COSOCK_CLOCK_H

/* Seconds since an arbitrary fixed point; never jumps with the wall clock.
 * While the virtual clock is on, its time instead (it moves only when
 * cn_clock_advance moves it). */
double cn_clock_now(void);
/* The same clock read cheaply, to within a few milliseconds (Linux's
 * CLOCK_MONOTONIC_COARSE: the kernel's last tick, no counter read; the
 * precise clock where there is none). For stamps read often and seldom
 * looked at (cosock.tasks's turn stamps); the virtual clock while on. */
double cn_clock_coarse(void);
/* Turns the virtual clock of this thread on at time now, or off (on 0). */
void cn_clock_virtual(int on, double now);
/* How far the loop's clock runs ahead of the program's (0 but while a
 * virtual clock that was started below 1 is on): the program's monotonic
 * time is cn_clock_now() - cn_clock_offset(); an absolute time a program
 * gives the loop is shifted forward by as much. */
double cn_clock_offset(void);
/* Whether the virtual clock is on in this thread. */
int cn_clock_is_virtual(void);
/* Moves the virtual clock forward to t; never back; nothing while it is off. */
void cn_clock_advance(double t);

#endif
