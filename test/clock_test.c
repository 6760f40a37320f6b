/* clock_test: the loop's clock and the virtual clock of cosock.sim (cmocka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/clock.h"

/* Off: the monotonic clock, which never goes back. */
static void real_clock_never_goes_back(void **state) {
  double a, b;
  (void)state;
  assert_false(cn_clock_is_virtual());
  a = cn_clock_now();
  b = cn_clock_now();
  assert_true(b >= a);
}

/* On: the virtual time, which moves only when advanced, and only forward. */
static void virtual_clock_moves_only_forward_when_told(void **state) {
  (void)state;
  cn_clock_virtual(1, 100.0);
  assert_true(cn_clock_is_virtual());
  assert_true(cn_clock_now() == 100.0);
  assert_true(cn_clock_now() == 100.0);
  cn_clock_advance(160.5);
  assert_true(cn_clock_now() == 160.5);
  cn_clock_advance(10.0);                      /* never back */
  assert_true(cn_clock_now() == 160.5);
  cn_clock_virtual(0, 0);
  assert_false(cn_clock_is_virtual());
}

/* Off again: advancing does nothing and the real clock is back. */
static void advance_while_off_does_nothing(void **state) {
  double a;
  (void)state;
  cn_clock_advance(1e12);
  a = cn_clock_now();
  assert_true(a < 1e12);
}

/* The coarse clock (cosock.tasks's stamps): the same clock as cn_clock_now,
 * behind it by at most the kernel's tick (the bound here is far wider),
 * never ahead; the virtual time while the virtual clock is on. */
static void coarse_clock_is_the_same_clock(void **state) {
  double coarse, now;
  (void)state;
  coarse = cn_clock_coarse();
  now = cn_clock_now();
  assert_true(coarse <= now);
  assert_true(now - coarse < 1.0);
  cn_clock_virtual(1, 100.0);
  assert_true(cn_clock_coarse() == 100.0);
  cn_clock_advance(101.25);
  assert_true(cn_clock_coarse() == 101.25);
  cn_clock_virtual(0, 0);
  assert_true(cn_clock_coarse() < 1e12 && cn_clock_coarse() != 101.25);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(real_clock_never_goes_back),
    cmocka_unit_test(virtual_clock_moves_only_forward_when_told),
    cmocka_unit_test(advance_while_off_does_nothing),
    cmocka_unit_test(coarse_clock_is_the_same_clock),
  };
  return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
