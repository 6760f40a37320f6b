/* ready_list: the intrusive FIFO of ready_list.h. */
#include "lib/ready_list.h"

int cn_rlist_push(cn_rlist *r, cn_rlink *l) {
  int first = r->head == NULL;
  if (l->listed) return 0;
  l->listed = 1;
  l->next = NULL;
  l->prev = r->tail;
  if (l->prev) l->prev->next = l;
  else r->head = l;
  r->tail = l;
  return first;
}

int cn_rlist_remove(cn_rlist *r, cn_rlink *l) {
  if (!l->listed) return 0;
  l->listed = 0;
  if (l->prev) l->prev->next = l->next;
  else r->head = l->next;
  if (l->next) l->next->prev = l->prev;
  else r->tail = l->prev;
  l->prev = l->next = NULL;
  return r->head == NULL;
}
