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

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(real_clock_never_goes_back),
    cmocka_unit_test(virtual_clock_moves_only_forward_when_told),
    cmocka_unit_test(advance_while_off_does_nothing),
  };
  return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
