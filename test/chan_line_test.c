/* chan_line_test: the line of waiting senders in isolation (cmocka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/chan_line.h"

static cn_line_entry entry(int64_t id) {
  cn_line_entry e;
  e.id = id;
  e.wid = id * 10;
  e.slot = (int)id + 100;
  return e;
}

/* The ids in line, first to last, must be exactly want[0..n-1]. */
static void assert_ids(const cn_line *l, const int64_t *want, size_t n) {
  size_t i;
  assert_int_equal(cn_line_len(l), n);
  for (i = 0; i < n; i++) {
    cn_line_entry *e = cn_line_at(l, i);
    assert_non_null(e);
    assert_int_equal(e->id, want[i]);
    assert_int_equal(e->wid, want[i] * 10);
    assert_int_equal(e->slot, (int)want[i] + 100);
  }
  assert_null(cn_line_at(l, n));
}

static void empty_line_without_buffer(void **state) {
  cn_line l;
  cn_line_entry e = entry(1);
  (void)state;
  cn_line_init(&l, NULL, 0);
  assert_int_equal(cn_line_len(&l), 0);
  assert_true(cn_line_full(&l));
  assert_null(cn_line_at(&l, 0));
  assert_int_equal(cn_line_push(&l, &e), -1);
  assert_int_equal(cn_line_remove(&l, 1), 0);
  cn_line_pop(&l); /* nothing to pop: nothing happens */
  assert_int_equal(cn_line_len(&l), 0);
}

static void first_in_first_out(void **state) {
  cn_line_entry buf[4];
  cn_line l;
  int64_t want[] = {2, 3, 4, 5};
  int64_t i;
  (void)state;
  cn_line_init(&l, buf, 4);
  for (i = 1; i <= 4; i++) {
    cn_line_entry e = entry(i);
    assert_int_equal(cn_line_push(&l, &e), 0);
  }
  assert_true(cn_line_full(&l));
  {
    cn_line_entry e = entry(9);
    assert_int_equal(cn_line_push(&l, &e), -1); /* full: refused, unchanged */
  }
  assert_int_equal(cn_line_at(&l, 0)->id, 1);
  cn_line_pop(&l);
  {
    cn_line_entry e = entry(5);                /* wraps around the ring */
    assert_int_equal(cn_line_push(&l, &e), 0);
  }
  assert_ids(&l, want, 4);
}

static void remove_keeps_order_around_the_wrap(void **state) {
  cn_line_entry buf[4];
  cn_line l;
  int64_t after_mid[] = {3, 5, 6};
  int64_t after_last[] = {3, 5};
  int64_t after_first[] = {5};
  int64_t i;
  (void)state;
  cn_line_init(&l, buf, 4);
  for (i = 1; i <= 4; i++) {
    cn_line_entry e = entry(i);
    cn_line_push(&l, &e);
  }
  cn_line_pop(&l);
  cn_line_pop(&l);                             /* head at buf[2] */
  for (i = 5; i <= 6; i++) {
    cn_line_entry e = entry(i);
    assert_int_equal(cn_line_push(&l, &e), 0); /* at buf[0], buf[1] */
  }
  assert_int_equal(cn_line_find(&l, 5)->slot, 105); /* across the wrap */
  assert_int_equal(cn_line_find(&l, 3)->wid, 30);
  assert_null(cn_line_find(&l, 1));           /* popped */
  assert_int_equal(cn_line_remove(&l, 4), 1);  /* the gap closes across the wrap */
  assert_null(cn_line_find(&l, 4));
  assert_ids(&l, after_mid, 3);
  assert_int_equal(cn_line_remove(&l, 4), 0);  /* gone already */
  assert_int_equal(cn_line_remove(&l, 6), 1);
  assert_ids(&l, after_last, 2);
  assert_int_equal(cn_line_remove(&l, 3), 1);
  assert_ids(&l, after_first, 1);
  assert_int_equal(cn_line_remove(&l, 5), 1);
  assert_int_equal(cn_line_len(&l), 0);
  {
    cn_line_entry e = entry(7);                /* empty again: starts over */
    assert_int_equal(cn_line_push(&l, &e), 0);
    assert_int_equal(cn_line_at(&l, 0)->id, 7);
  }
}

static void move_to_a_bigger_buffer(void **state) {
  cn_line_entry small[3], big[8];
  cn_line l;
  int64_t want[] = {2, 3, 4, 5, 6, 7, 8, 9};
  int64_t i;
  (void)state;
  cn_line_init(&l, small, 3);
  for (i = 1; i <= 3; i++) {
    cn_line_entry e = entry(i);
    cn_line_push(&l, &e);
  }
  cn_line_pop(&l);
  {
    cn_line_entry e = entry(4);                /* wrapped: head at small[1] */
    cn_line_push(&l, &e);
  }
  cn_line_move(&l, big, 8);
  assert_ptr_equal(l.buf, big);
  for (i = 5; i <= 9; i++) {
    cn_line_entry e = entry(i);
    assert_int_equal(cn_line_push(&l, &e), 0);
  }
  assert_ids(&l, want, 8);
  assert_true(cn_line_full(&l));
}

static void many_pushes_and_pops_stay_in_order(void **state) {
  cn_line_entry buf[5];
  cn_line l;
  int64_t next_in = 1, next_out = 1;
  int round;
  (void)state;
  cn_line_init(&l, buf, 5);
  for (round = 0; round < 1000; round++) {
    int k, pushes = 1 + round % 5, pops = 1 + (round * 7) % 5;
    for (k = 0; k < pushes && !cn_line_full(&l); k++) {
      cn_line_entry e = entry(next_in++);
      assert_int_equal(cn_line_push(&l, &e), 0);
    }
    for (k = 0; k < pops && cn_line_len(&l) > 0; k++) {
      assert_int_equal(cn_line_at(&l, 0)->id, next_out);
      next_out++;
      cn_line_pop(&l);
    }
  }
  assert_int_equal((int64_t)cn_line_len(&l), next_in - next_out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(empty_line_without_buffer),
    cmocka_unit_test(first_in_first_out),
    cmocka_unit_test(remove_keeps_order_around_the_wrap),
    cmocka_unit_test(move_to_a_bigger_buffer),
    cmocka_unit_test(many_pushes_and_pops_stay_in_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
