/* timer_heap: a binary min-heap of deadlines with O(log n) insert and cancel. */
#include <stdlib.h>

#include "timer_heap.h"

static int earlier(const th_node *a, const th_node *b) {
  if (a->when != b->when) return a->when < b->when;
  return a->seq < b->seq;
}

static void place(th_heap *h, size_t i, th_node *node) {
  h->v[i] = node;
  node->pos = (uint32_t)i;                     /* i < cap < TH_NOT_QUEUED */
}

static void sift_up(th_heap *h, size_t i) {
  th_node *node = h->v[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!earlier(node, h->v[parent])) break;
    place(h, i, h->v[parent]);
    i = parent;
  }
  place(h, i, node);
}

static void sift_down(th_heap *h, size_t i) {
  th_node *node = h->v[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= h->n) break;
    if (child + 1 < h->n && earlier(h->v[child + 1], h->v[child])) child++;
    if (!earlier(h->v[child], node)) break;
    place(h, i, h->v[child]);
    i = child;
  }
  place(h, i, node);
}

void th_init(th_heap *h) {
  h->v = NULL;
  h->n = h->cap = 0;
  h->seq = 0;
}

void th_free(th_heap *h) {
  size_t i;
  for (i = 0; i < h->n; i++) h->v[i]->pos = TH_NOT_QUEUED;
  free(h->v);
  th_init(h);
}

int th_reserve(th_heap *h, size_t cap) {
  th_node **v;
  if (cap <= h->cap) return 0;
  if (cap >= TH_NOT_QUEUED || cap > ((size_t)-1) / sizeof *v) return -1;
  v = realloc(h->v, cap * sizeof *v);
  if (v == NULL) return -1;
  h->v = v;
  h->cap = cap;
  return 0;
}

int th_push(th_heap *h, th_node *node, double when) {
  if (h->n == h->cap && th_reserve(h, h->cap ? h->cap * 2 : 16) != 0) return -1;
  node->when = when;
  node->seq = h->seq++;
  h->v[h->n] = node;
  sift_up(h, h->n++);
  return 0;
}

void th_move(th_heap *h, th_node *node, double when, uint64_t seq) {
  size_t i = node->pos;
  node->when = when;
  node->seq = seq;
  if (i > 0 && earlier(node, h->v[(i - 1) / 2])) sift_up(h, i);
  else sift_down(h, i);
}

void th_remove(th_heap *h, th_node *node) {
  size_t i = node->pos;
  th_node *last;
  if (node->pos == TH_NOT_QUEUED || i >= h->n || h->v[i] != node) return;
  node->pos = TH_NOT_QUEUED;
  last = h->v[--h->n];
  if (last == node) return;
  place(h, i, last);
  /* The moved node may belong above or below its new place. */
  if (i > 0 && earlier(last, h->v[(i - 1) / 2])) sift_up(h, i);
  else sift_down(h, i);
}

th_node *th_top(const th_heap *h) {
  return h->n ? h->v[0] : NULL;
}
