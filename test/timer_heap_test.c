/* timer_heap_test: the deadline heap in isolation (cmocka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lib/timer_heap.h"

/* Pops the earliest node, checking the heap invariant on the way. */
static th_node *pop(th_heap *h) {
  th_node *top = th_top(h);
  if (top) th_remove(h, top);
  return top;
}

static void check_invariant(const th_heap *h) {
  size_t i;
  for (i = 0; i < h->n; i++) {
    assert_int_equal(h->v[i]->pos, i);
    if (i > 0) {
      const th_node *p = h->v[(i - 1) / 2];
      assert_true(p->when < h->v[i]->when ||
                  (p->when == h->v[i]->when && p->seq < h->v[i]->seq));
    }
  }
}

static void empty_heap_has_no_top(void **state) {
  th_heap h;
  th_node n;
  (void)state;
  th_init(&h);
  th_node_init(&n);
  assert_null(th_top(&h));
  th_remove(&h, &n); /* not queued: nothing happens */
  assert_false(th_queued(&n));
  th_free(&h);
}

static void pops_in_deadline_order(void **state) {
  th_heap h;
  th_node n[5];
  double when[5] = {3.0, 1.0, 4.0, 1.5, 0.5};
  double expect[5] = {0.5, 1.0, 1.5, 3.0, 4.0};
  int i;
  (void)state;
  th_init(&h);
  for (i = 0; i < 5; i++) {
    th_node_init(&n[i]);
    assert_int_equal(th_push(&h, &n[i], when[i]), 0);
    check_invariant(&h);
  }
  for (i = 0; i < 5; i++) {
    th_node *top = pop(&h);
    assert_non_null(top);
    assert_true(top->when == expect[i]);
    assert_false(th_queued(top));
    check_invariant(&h);
  }
  assert_null(th_top(&h));
  th_free(&h);
}

static void equal_deadlines_keep_push_order(void **state) {
  th_heap h;
  th_node n[8];
  int i;
  (void)state;
  th_init(&h);
  for (i = 0; i < 8; i++) {
    th_node_init(&n[i]);
    assert_int_equal(th_push(&h, &n[i], 2.0), 0);
  }
  for (i = 0; i < 8; i++) assert_ptr_equal(pop(&h), &n[i]);
  th_free(&h);
}

static void cancel_of_the_top(void **state) {
  th_heap h;
  th_node a, b, c;
  (void)state;
  th_init(&h);
  th_node_init(&a); th_node_init(&b); th_node_init(&c);
  th_push(&h, &a, 1.0);
  th_push(&h, &b, 2.0);
  th_push(&h, &c, 3.0);
  th_remove(&h, &a);
  assert_false(th_queued(&a));
  check_invariant(&h);
  assert_ptr_equal(th_top(&h), &b);
  assert_int_equal(h.n, 2);
  th_free(&h);
}

static void cancel_twice_is_harmless(void **state) {
  th_heap h;
  th_node a, b;
  (void)state;
  th_init(&h);
  th_node_init(&a); th_node_init(&b);
  th_push(&h, &a, 1.0);
  th_push(&h, &b, 2.0);
  th_remove(&h, &b);
  th_remove(&h, &b);
  assert_int_equal(h.n, 1);
  assert_ptr_equal(th_top(&h), &a);
  /* A removed node can be armed again. */
  assert_int_equal(th_push(&h, &b, 0.5), 0);
  assert_ptr_equal(th_top(&h), &b);
  th_free(&h);
}

static void cancel_from_the_middle_keeps_order(void **state) {
  enum { N = 1000 };
  th_heap h;
  th_node *n = calloc(N, sizeof *n);
  double last = -1;
  int i, left = 0;
  (void)state;
  assert_non_null(n);
  th_init(&h);
  srand(7);
  for (i = 0; i < N; i++) {
    th_node_init(&n[i]);
    assert_int_equal(th_push(&h, &n[i], (double)(rand() % 100)), 0);
  }
  for (i = 0; i < N; i += 3) th_remove(&h, &n[i]);
  check_invariant(&h);
  for (i = 0; i < N; i++) left += th_queued(&n[i]);
  assert_int_equal(h.n, (size_t)left);
  while (h.n) {
    th_node *top = pop(&h);
    assert_true(top->when >= last);
    assert_true((top - n) % 3 != 0);
    last = top->when;
  }
  th_free(&h);
  free(n);
}

/* A queued node moved later or earlier ends up where a fresh push of that
 * key would; the seq it is given decides ties as a push at that time would. */
static void move_later_and_earlier(void **state) {
  th_heap h;
  th_node n[6];
  uint64_t seq;
  int i;
  (void)state;
  th_init(&h);
  for (i = 0; i < 6; i++) {
    th_node_init(&n[i]);
    assert_int_equal(th_push(&h, &n[i], (double)(i + 1)), 0);
  }
  th_move(&h, &n[0], 4.5, th_next_seq(&h));    /* 1.0 -> 4.5: sinks */
  check_invariant(&h);
  th_move(&h, &n[5], 0.5, th_next_seq(&h));    /* 6.0 -> 0.5: rises */
  check_invariant(&h);
  seq = th_next_seq(&h);
  th_move(&h, &n[1], 4.0, seq);                /* ties with n[3] (pushed first) */
  check_invariant(&h);
  assert_ptr_equal(pop(&h), &n[5]);
  assert_ptr_equal(pop(&h), &n[2]);
  assert_ptr_equal(pop(&h), &n[3]);
  assert_ptr_equal(pop(&h), &n[1]);
  assert_ptr_equal(pop(&h), &n[0]);
  assert_ptr_equal(pop(&h), &n[4]);
  assert_null(th_top(&h));
  th_free(&h);
}

static void many_timers(void **state) {
  enum { N = 100000 };
  th_heap h;
  th_node *n = calloc(N, sizeof *n);
  int i;
  (void)state;
  assert_non_null(n);
  th_init(&h);
  assert_int_equal(th_reserve(&h, N), 0);
  for (i = 0; i < N; i++) {
    th_node_init(&n[i]);
    assert_int_equal(th_push(&h, &n[i], (double)(N - i)), 0);
  }
  for (i = N - 1; i >= 0; i--) assert_ptr_equal(pop(&h), &n[i]);
  th_free(&h);
  free(n);
}

static void free_unqueues_nodes(void **state) {
  th_heap h;
  th_node a;
  (void)state;
  th_init(&h);
  th_node_init(&a);
  th_push(&h, &a, 1.0);
  th_free(&h);
  assert_false(th_queued(&a));
  assert_int_equal(h.n, 0);
}

/* The tag belongs to the node's owner: no heap operation reads or changes it. */
static void tags_are_left_alone(void **state) {
  th_heap h;
  th_node n[3];
  int i;
  (void)state;
  th_init(&h);
  for (i = 0; i < 3; i++) {
    th_node_init(&n[i]);
    n[i].tag = (unsigned char)(7 + i);
    assert_int_equal(th_push(&h, &n[i], 3.0 - i), 0);
  }
  th_move(&h, &n[2], 5.0, th_next_seq(&h));
  th_remove(&h, &n[1]);
  assert_ptr_equal(pop(&h), &n[0]);
  th_free(&h);
  for (i = 0; i < 3; i++) assert_int_equal(n[i].tag, 7 + i);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(empty_heap_has_no_top),
    cmocka_unit_test(pops_in_deadline_order),
    cmocka_unit_test(equal_deadlines_keep_push_order),
    cmocka_unit_test(cancel_of_the_top),
    cmocka_unit_test(cancel_twice_is_harmless),
    cmocka_unit_test(cancel_from_the_middle_keeps_order),
    cmocka_unit_test(move_later_and_earlier),
    cmocka_unit_test(many_timers),
    cmocka_unit_test(free_unqueues_nodes),
    cmocka_unit_test(tags_are_left_alone),
  };
  return cmocka_run_group_tests_name("timer_heap", tests, NULL, NULL);
}
