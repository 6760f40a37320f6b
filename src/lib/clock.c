/* clock: the monotonic time source of the run loop's timers, and the
 * virtual clock that replaces it while cosock.sim is on (src/features/sim.c). */
#include <math.h>
#include <time.h>

#include "clock.h"

/* The virtual clock. Per thread, as a loop runs in one thread: a
 * simulation in one Lua state does not move another thread's clock. A
 * thread-local costs a call in a shared object, so the clock first reads
 * how many threads simulate (a plain load; 0 unless cosock.sim is on). */
#if defined(__GNUC__)
#define CN_PER_THREAD __thread
#define LOAD(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
#define ADD(v, n) __atomic_add_fetch(&(v), (n), __ATOMIC_RELAXED)
#else
#define CN_PER_THREAD _Thread_local
#define LOAD(v) (v)
#define ADD(v, n) ((v) += (n))
#endif
static CN_PER_THREAD struct {
  int on;
  double now;
  double offset;    /* now - offset is what the program reads (cn_clock_offset) */
} virt;
static int nvirtual; /* threads whose virtual clock is on */

double cn_clock_now(void) {
  struct timespec ts;
  if (LOAD(nvirtual) != 0 && virt.on) return virt.now; /* (off: one predicted branch) */
  /* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; a wall-clock
   * step (NTP, manual change) neither stalls nor fires the timers. */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cn_clock_coarse(void) {
  struct timespec ts;
  if (LOAD(nvirtual) != 0 && virt.on) return virt.now;
#ifdef CLOCK_MONOTONIC_COARSE
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
#endif
    clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The loop's code takes a time <= 0 for "none" in places (a timer's -1, a
 * scope's deadline 0), as the real monotonic clock is far from 0. A virtual
 * clock asked to start below 1 therefore runs a whole number of seconds
 * ahead, at [1, 2), and the program's clock (cosock.core.monotime, and the
 * deadlines it gives back: cn_clock_offset) is shifted back by as much. */
void cn_clock_virtual(int on, double now) {
  if ((on != 0) != virt.on) ADD(nvirtual, on != 0 ? 1 : -1);
  virt.on = on != 0;
  virt.offset = on != 0 && now < 1 ? ceil(1 - now) : 0;
  virt.now = now + virt.offset;
}

double cn_clock_offset(void) {
  return LOAD(nvirtual) != 0 && virt.on ? virt.offset : 0;
}

int cn_clock_is_virtual(void) { return virt.on; }

void cn_clock_advance(double t) {
  if (virt.on && t > virt.now) virt.now = t;
}
