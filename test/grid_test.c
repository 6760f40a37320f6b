/* grid_test: the tick arithmetic of fixed-rate schedules (cmocka). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/grid.h"

/* On time: the next tick is the one after the last. */
static void next_tick_when_on_time(void **state) {
  (void)state;
  assert_true(grid_next(10.0, 0.5, 1, 10.5) == 2);   /* exactly at tick 1 */
  assert_true(grid_next(10.0, 0.5, 1, 10.7) == 2);   /* a little late */
  assert_true(grid_next(10.0, 0.5, 0, 10.0) == 1);   /* at the origin */
}

/* Late by several periods: the ticks in between are skipped, the result is
 * still on the grid of the origin (no drift from the late wake). */
static void missed_ticks_are_skipped(void **state) {
  double k;
  (void)state;
  k = grid_next(100.0, 0.25, 1, 101.3);               /* ticks 2..5 passed */
  assert_true(k == 6);
  assert_true(100.0 + k * 0.25 > 101.3);
  assert_true(100.0 + (k - 1) * 0.25 <= 101.3);
}

/* A time exactly on a tick counts as that tick having passed. */
static void a_tick_at_now_is_past(void **state) {
  (void)state;
  assert_true(grid_next(0.0, 1.0, 2, 5.0) == 6);
}

/* Never at or before `last`, even when now is earlier than that tick. */
static void never_goes_back(void **state) {
  (void)state;
  assert_true(grid_next(0.0, 1.0, 7, 3.0) == 8);
  assert_true(grid_next(0.0, 1.0, 0, -5.0) == 1);
}

/* Periods that do not divide evenly in binary still land after now. */
static void rounding_never_gives_a_past_tick(void **state) {
  int i;
  (void)state;
  for (i = 1; i < 10000; i++) {
    double now = 1000.0 + i * 0.1, origin = 1000.0, p = 0.1;
    double k = grid_next(origin, p, 0, now);
    assert_true(origin + k * p > now);
    assert_true(k == 1 || origin + (k - 1) * p <= now + 1e-9);
  }
}

/* A period below the resolution of the numbers: it ends, with last + 1. */
static void no_endless_loop_without_resolution(void **state) {
  double k;
  (void)state;
  k = grid_next(1e9, 1e-300, 5, 1e9 + 1);
  assert_true(isfinite(k));
  assert_true(k > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(next_tick_when_on_time),
    cmocka_unit_test(missed_ticks_are_skipped),
    cmocka_unit_test(a_tick_at_now_is_past),
    cmocka_unit_test(never_goes_back),
    cmocka_unit_test(rounding_never_gives_a_past_tick),
    cmocka_unit_test(no_endless_loop_without_resolution),
  };
  return cmocka_run_group_tests_name("grid", tests, NULL, NULL);
}
