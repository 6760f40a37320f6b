/* clock: the monotonic time source of the run loop's timers. */
#include <time.h>

#include "clock.h"

double cn_clock_now(void) {
  struct timespec ts;
  /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; a wall-clock
   * step (NTP, manual change) neither stalls nor fires the timers. */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
