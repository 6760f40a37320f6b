/* ready_list: an intrusive first-in first-out list of things that became
 * ready for a later step to hand on (the resolver's ended lookups, the timer
 * objects that came due): each item embeds a cn_rlink, is listed at most
 * once, and leaves in O(1) from anywhere in the list. Adding the first item
 * and removing the last say so, so that the owner turns its hook point on and
 * off with the list. No allocation, no Lua. */
#ifndef COSOCK_READY_LIST_H
#define COSOCK_READY_LIST_H

#include <stddef.h>

typedef struct cn_rlink {
  struct cn_rlink *prev, *next;
  unsigned char listed;         /* in a list now */
} cn_rlink;

typedef struct cn_rlist {
  cn_rlink *head, *tail;        /* first and last listed; NULL when empty */
} cn_rlist;

/* Appends l unless it is listed already. Returns 1 when it was the first
 * (the list was empty), else 0. */
int cn_rlist_push(cn_rlist *r, cn_rlink *l);
/* Removes l when it is listed. Returns 1 when that emptied the list, else 0. */
int cn_rlist_remove(cn_rlist *r, cn_rlink *l);

/* The first item listed, or NULL. */
static inline cn_rlink *cn_rlist_first(const cn_rlist *r) { return r->head; }
static inline int cn_rlist_empty(const cn_rlist *r) { return r->head == NULL; }

/* The item of type `type` whose member `member` is the link l. */
#define CN_RLIST_ITEM(l, type, member) ((type *)(void *)((char *)(l) - offsetof(type, member)))
/* The first item of r (of that type, linked through member), or NULL. */
#define CN_RLIST_HEAD(r, type, member) \
  ((r)->head != NULL ? CN_RLIST_ITEM((r)->head, type, member) : (type *)NULL)

#endif
