/* ready_list_test: the intrusive FIFO of ready items in isolation (cmocka). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/ready_list.h"

typedef struct item {
  int id;
  cn_rlink link;
} item;

/* The ids listed, first to last, must be exactly want[0..n-1]. */
static void assert_ids(const cn_rlist *r, const int *want, int n) {
  cn_rlink *l = cn_rlist_first(r), *last = NULL;
  int i;
  for (i = 0; i < n; i++, last = l, l = l->next) {
    assert_non_null(l);
    assert_int_equal(CN_RLIST_ITEM(l, item, link)->id, want[i]);
    assert_true(l->listed);
    assert_ptr_equal(l->prev, last);
  }
  assert_null(l);
  assert_ptr_equal(r->tail, last);
  assert_int_equal(cn_rlist_empty(r), n == 0);
}

static void items(item *it, int n) {
  int i;
  memset(it, 0, (size_t)n * sizeof *it);
  for (i = 0; i < n; i++) it[i].id = i + 1;
}

static void push_keeps_order_and_says_when_first(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[3];
  const int want[] = {1, 2, 3};
  (void)state;
  items(it, 3);
  assert_int_equal(cn_rlist_push(&r, &it[0].link), 1);
  assert_int_equal(cn_rlist_push(&r, &it[1].link), 0);
  assert_int_equal(cn_rlist_push(&r, &it[2].link), 0);
  assert_ids(&r, want, 3);
}

static void push_twice_lists_once(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[2];
  const int want[] = {1, 2};
  (void)state;
  items(it, 2);
  cn_rlist_push(&r, &it[0].link);
  cn_rlist_push(&r, &it[1].link);
  assert_int_equal(cn_rlist_push(&r, &it[0].link), 0);
  assert_ids(&r, want, 2);
}

static void remove_from_anywhere(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[4];
  const int after_mid[] = {1, 3, 4}, after_head[] = {3, 4}, after_tail[] = {3};
  int i;
  (void)state;
  items(it, 4);
  for (i = 0; i < 4; i++) cn_rlist_push(&r, &it[i].link);
  assert_int_equal(cn_rlist_remove(&r, &it[1].link), 0);
  assert_ids(&r, after_mid, 3);
  assert_false(it[1].link.listed);
  assert_null(it[1].link.next);
  assert_int_equal(cn_rlist_remove(&r, &it[0].link), 0);
  assert_ids(&r, after_head, 2);
  assert_int_equal(cn_rlist_remove(&r, &it[3].link), 0);
  assert_ids(&r, after_tail, 1);
  assert_int_equal(cn_rlist_remove(&r, &it[2].link), 1); /* the last: now empty */
  assert_ids(&r, NULL, 0);
}

static void remove_unlisted_does_nothing(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[2];
  const int want[] = {1};
  (void)state;
  items(it, 2);
  assert_int_equal(cn_rlist_remove(&r, &it[0].link), 0); /* an empty list stays empty, not "emptied" */
  cn_rlist_push(&r, &it[0].link);
  assert_int_equal(cn_rlist_remove(&r, &it[1].link), 0);
  assert_ids(&r, want, 1);
}

static void relisted_goes_last(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[3];
  const int want[] = {2, 3, 1};
  int i;
  (void)state;
  items(it, 3);
  for (i = 0; i < 3; i++) cn_rlist_push(&r, &it[i].link);
  cn_rlist_remove(&r, &it[0].link);
  assert_int_equal(cn_rlist_push(&r, &it[0].link), 0);
  assert_ids(&r, want, 3);
}

static void drain_from_the_front(void **state) {
  cn_rlist r = {NULL, NULL};
  item it[5];
  cn_rlink *l;
  int i, n = 0, emptied = 0;
  (void)state;
  items(it, 5);
  for (i = 0; i < 5; i++) cn_rlist_push(&r, &it[i].link);
  while ((l = cn_rlist_first(&r)) != NULL) {
    assert_int_equal(CN_RLIST_ITEM(l, item, link)->id, ++n);
    emptied += cn_rlist_remove(&r, l);
  }
  assert_int_equal(n, 5);
  assert_int_equal(emptied, 1);
  assert_true(cn_rlist_empty(&r));
  assert_null(r.tail);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(push_keeps_order_and_says_when_first),
    cmocka_unit_test(push_twice_lists_once),
    cmocka_unit_test(remove_from_anywhere),
    cmocka_unit_test(remove_unlisted_does_nothing),
    cmocka_unit_test(relisted_goes_last),
    cmocka_unit_test(drain_from_the_front),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
