/* chan_line: a first-come-first-served ring of waiting senders, over a
 * buffer the caller owns (see chan_line.h). */
#include "chan_line.h"

void cn_line_init(cn_line *l, cn_line_entry *buf, size_t cap) {
  l->buf = buf;
  l->cap = cap;
  l->head = 0;
  l->n = 0;
}

int cn_line_push(cn_line *l, const cn_line_entry *e) {
  if (l->n == l->cap) return -1;
  l->buf[(l->head + l->n) % l->cap] = *e;
  l->n++;
  return 0;
}

cn_line_entry *cn_line_at(const cn_line *l, size_t i) {
  if (i >= l->n) return NULL;
  return &l->buf[(l->head + i) % l->cap];
}

cn_line_entry *cn_line_find(const cn_line *l, int64_t id) {
  size_t i;
  for (i = 0; i < l->n; i++)
    if (l->buf[(l->head + i) % l->cap].id == id) return &l->buf[(l->head + i) % l->cap];
  return NULL;
}

void cn_line_pop(cn_line *l) {
  if (l->n == 0) return;
  l->head = (l->head + 1) % l->cap;
  if (--l->n == 0) l->head = 0;
}

int cn_line_remove(cn_line *l, int64_t id) {
  size_t i;
  for (i = 0; i < l->n; i++) {
    if (l->buf[(l->head + i) % l->cap].id != id) continue;
    /* Close the gap: everyone behind moves up one place. */
    for (; i + 1 < l->n; i++)
      l->buf[(l->head + i) % l->cap] = l->buf[(l->head + i + 1) % l->cap];
    if (--l->n == 0) l->head = 0;
    return 1;
  }
  return 0;
}

void cn_line_move(cn_line *l, cn_line_entry *buf, size_t cap) {
  size_t i;
  for (i = 0; i < l->n; i++) buf[i] = l->buf[(l->head + i) % l->cap];
  l->buf = buf;
  l->cap = cap;
  l->head = 0;
}
