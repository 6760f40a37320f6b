/* timer_heap: a binary min-heap of deadlines with O(log n) insert and cancel.
 *
 * Nodes are embedded in their owners (tasks, timer objects); the heap stores
 * pointers and keeps each node's position up to date, so removing any node is
 * O(log n). A node's tag is its owner's: the heap never reads or writes it.
 * Equal deadlines come out in the order they were pushed (a sequence number
 * breaks ties), which keeps wake order deterministic. No Lua here. */
#ifndef COSOCK_TIMER_HEAP_H
#define COSOCK_TIMER_HEAP_H

#include <stddef.h>
#include <stdint.h>

#define TH_NOT_QUEUED UINT32_MAX

typedef struct th_node {
  double when;   /* deadline, seconds on the monotonic clock */
  uint64_t seq;  /* push order, breaks ties between equal deadlines */
  uint32_t pos;  /* index in the heap, TH_NOT_QUEUED when not in it (32 bits:
                  * with tag, the node is 24 bytes; a heap holds < 2^32-1) */
  unsigned char tag; /* set by the owner (which kind of owner), left alone here */
} th_node;

typedef struct th_heap {
  th_node **v;
  size_t n, cap;
  uint64_t seq;
} th_heap;

void th_init(th_heap *h);
void th_free(th_heap *h);
/* Makes room for cap nodes so that th_push cannot fail below that size.
 * Returns 0, or -1 when memory is exhausted (the heap is unchanged). */
int th_reserve(th_heap *h, size_t cap);
/* Inserts node (which must not be queued) with deadline when.
 * Returns 0, or -1 when memory is exhausted (nothing changed). */
int th_push(th_heap *h, th_node *node, double when);
/* Moves queued node to deadline when with tie-breaker seq (from th_next_seq
 * or an earlier push), up or down as the new key requires. */
void th_move(th_heap *h, th_node *node, double when, uint64_t seq);
/* A sequence number as th_push would give one now (for th_move). */
static inline uint64_t th_next_seq(th_heap *h) { return h->seq++; }
/* Removes node if it is queued; a node that is not queued is left alone. */
void th_remove(th_heap *h, th_node *node);
/* The earliest node, or NULL when the heap is empty. */
th_node *th_top(const th_heap *h);
static inline int th_queued(const th_node *node) { return node->pos != TH_NOT_QUEUED; }
static inline void th_node_init(th_node *node) { node->pos = TH_NOT_QUEUED; }

#endif
