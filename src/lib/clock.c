/* clock: the monotonic time source of the run loop's timers, and the
 * virtual clock that replaces it while cosock.sim is on (src/sim.c). */
#include <time.h>

#include "clock.h"

/* The virtual clock. Per thread, as a loop runs in one thread: a
 * simulation in one Lua state does not move another thread's clock. */
#if defined(__GNUC__)
#define CN_PER_THREAD __thread
#else
#define CN_PER_THREAD _Thread_local
#endif
static CN_PER_THREAD struct {
  int on;
  double now;
} virt;

double cn_clock_now(void) {
  struct timespec ts;
  if (virt.on) return virt.now; /* (off: a well-predicted branch) */
  /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; a wall-clock
   * step (NTP, manual change) neither stalls nor fires the timers. */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cn_clock_virtual(int on, double now) {
  virt.on = on != 0;
  virt.now = now;
}

int cn_clock_is_virtual(void) { return virt.on; }

void cn_clock_advance(double t) {
  if (virt.on && t > virt.now) virt.now = t;
}
