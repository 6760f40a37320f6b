/* chan_line: the line of senders waiting on a full bounded channel (or on a
 * rendezvous), first come first served.
 *
 * Lua-free, and allocation-free: the caller owns the buffer (src/features/channel.c
 * keeps it in a Lua userdata, so a raised error can leak nothing) and hands
 * over a bigger one, with cn_line_move, when cn_line_push says it is full.
 * The entries form a ring in buf[0..cap-1]; entry i of the line (0 = the
 * first in line) is buf[(head + i) % cap]. */
#ifndef COSOCK_CHAN_LINE_H
#define COSOCK_CHAN_LINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cn_line_entry {
  int64_t id;    /* the channel's number for this send (> 0, unique per channel) */
  int64_t wid;   /* the wait id of the parked task, 0 for a waker-protocol wait */
  int slot;      /* the parked task's slot, -1 for a waker-protocol wait */
} cn_line_entry;

typedef struct cn_line {
  cn_line_entry *buf;
  size_t cap;    /* entries buf can hold */
  size_t head;   /* index in buf of the first in line */
  size_t n;      /* entries in line */
} cn_line;

/* An empty line over buf (cap entries; buf may be NULL when cap is 0). */
void cn_line_init(cn_line *l, cn_line_entry *buf, size_t cap);

static inline size_t cn_line_len(const cn_line *l) { return l->n; }
static inline int cn_line_full(const cn_line *l) { return l->n == l->cap; }

/* Puts e at the end of the line. Returns 0, or -1 when the line is full
 * (nothing changes; give it a bigger buffer with cn_line_move). */
int cn_line_push(cn_line *l, const cn_line_entry *e);

/* Entry i of the line (0: the first), or NULL when i >= the length. */
cn_line_entry *cn_line_at(const cn_line *l, size_t i);

/* The entry with this id, or NULL when none is in line. */
cn_line_entry *cn_line_find(const cn_line *l, int64_t id);

/* Drops the first in line (nothing when empty). */
void cn_line_pop(cn_line *l);

/* Takes the entry with this id out of the line, keeping the others' order.
 * Returns 1, or 0 when no entry has that id. */
int cn_line_remove(cn_line *l, int64_t id);

/* Moves the line into buf (cap entries, at least the line's length), the
 * first in line at buf[0]; the old buffer is no longer used. */
void cn_line_move(cn_line *l, cn_line_entry *buf, size_t cap);

#endif
