/* chan_state: what the files of cosock.channel share (channel.c: send and
 * receive with their waits, the methods, the module; channel_line.c: the
 * line of senders of a bounded channel or a rendezvous; channel_op.c:
 * cosock.op's tries and parks on channels). Not for other features: they
 * see channel.h. */
#ifndef COSOCK_CHAN_STATE_H
#define COSOCK_CHAN_STATE_H

#include "compat.h"

#include "lib/chan_line.h"
#include "loop.h"
#include "task.h"

#define UNBOUNDED (-1)

typedef struct cn_chan {
  lua_Integer first, last;  /* positions of the oldest and the newest queued message */
  lua_Integer cap;          /* UNBOUNDED, 0 (rendezvous) or the capacity */
  lua_Integer ids;          /* the last id given to a sender in line */
  lua_Integer rx_wid;       /* the receiver's ticket: the wait id (0: none) ... */
  int rx_slot;              /* ... and the slot of its task */
  unsigned char closed;
  unsigned char close_ready; /* closed counts as ready here whatever set_close_wakes says */
  unsigned char rx_waker;   /* link.waker holds the waker of a task in select */
  unsigned char tx_waker;   /* aux[AUX_SENDR] holds the waker of a task in select */
  unsigned char rx_op;      /* the ticket is a cosock.op perform's: another may wake it */
  const void *tx, *rx;      /* the two ends (the fast paths check self against them) */
  cn_line line;             /* senders waiting; its buffer is aux[AUX_BUF] */
} cn_chan;

/* The aux table's slots. */
enum { AUX_SENDR = 1, AUX_BUF, AUX_PEND, AUX_PROXY };
/* AUX_PEND: id -> the message of the sender in line (DELIVERED once taken).
 * AUX_PROXY: id -> the waker of a sender waiting through the protocol. */

/* Upvalues of the per-end fast paths. */
enum { UP_LOOP = 1, UP_CHAN, UP_QUEUE, UP_LINK };
/* Upvalues of channel_new. */
enum { NEW_LOOP = 1, NEW_TX_MT, NEW_RX_MT, NEW_QUEUE_MT };
#define UPV(k) lua_upvalueindex(k)

/* Where one channel's parts are: stack indices or upvalue pseudo-indices. */
typedef struct chan_ref {
  cn_loop *lp;              /* NULL in a proxy's setwaker (it needs none) */
  cn_chan *ch;
  int ud, q, link;
} chan_ref;

/* The parts of the channel whose userdata, queue and link are at base,
 * base + 1, base + 2 (stack indices). */
static inline void ref_at(lua_State *L, chan_ref *c, int base) {
  c->lp = cn_loop_get(L);
  c->ch = lua_touserdata(L, base);
  c->ud = base;
  c->q = base + 1;
  c->link = base + 2;
}

static inline void ref_up(lua_State *L, chan_ref *c, cn_chan *ch) {
  c->lp = cn_loop_get(L);
  c->ch = ch;
  c->ud = UPV(UP_CHAN);
  c->q = UPV(UP_QUEUE);
  c->link = UPV(UP_LINK);
}

/* The task parked directly (cn_prepark) in wait wid, or NULL once that wait
 * ended (woken, timed out, cancelled). */
static inline cn_task *ticket_task(cn_loop *lp, int slot, lua_Integer wid) {
  cn_task *t = cn_task_get(lp, slot);
  if (t == NULL || wid == 0 || t->waitid != wid || !t->bare || t->state != T_PARKED) return NULL;
  return t;
}

/* The task parked in receive, or NULL (a stale ticket is dropped). */
static inline cn_task *rx_ticket(const chan_ref *c) {
  cn_task *t;
  if (c->ch->rx_wid == 0) return NULL;
  t = ticket_task(c->lp, c->ch->rx_slot, c->ch->rx_wid);
  if (t == NULL) c->ch->rx_wid = 0;
  return t;
}

static inline int rx_waiting(const chan_ref *c) { return c->ch->rx_waker || rx_ticket(c) != NULL; }

/* The marks of a nil message (in the queue or the line) and of a sender's
 * message taken by a receive (aux[AUX_PEND][id]); channel_line.c has them. */
extern const char cn_chan_nil_mark, cn_chan_delivered_mark;
#define NILMARK ((void *)&cn_chan_nil_mark)
#define DELIVERED ((void *)&cn_chan_delivered_mark)

static inline lua_Integer queued(const cn_chan *ch) { return ch->last - ch->first + 1; }

/* The queue's key for position pos. */
static inline lua_Integer qindex(const cn_chan *ch, lua_Integer pos) {
  return ch->cap > 0 ? (pos - 1) % ch->cap + 1 : pos;
}

/* Appends the message at index msg (absolute; nil or none: a nil message). */
static inline void enqueue(lua_State *L, const chan_ref *c, int msg) {
  cn_chan *ch = c->ch;
  lua_Integer pos = ch->last + 1;
  if (lua_type(L, msg) <= LUA_TNIL) lua_pushlightuserdata(L, NILMARK);
  else lua_pushvalue(L, msg);
  lua_rawseti(L, c->q, qindex(ch, pos));       /* may raise (memory): nothing changed yet */
  ch->last = pos;
}

static inline int fail(lua_State *L, const char *err) {
  lua_pushnil(L);
  lua_pushstring(L, err);
  return 2;
}

/* The line of senders (channel_line.c): a bounded channel's and a
 * rendezvous's senders waiting, their messages in the aux table. */
/* Pushes the channel's aux table, making it on first use. */
int cn_chan_push_aux(lua_State *L, const chan_ref *c);
/* aux[AUX_PEND][id] = the value on top (popped). */
void cn_chan_set_pend(lua_State *L, int aux, lua_Integer id);
/* Pushes aux[AUX_PEND][id]; returns its type. */
int cn_chan_push_pend(lua_State *L, int aux, lua_Integer id);
/* Does the sender of entry e still wait? A direct wait: its ticket says. A
 * wait through a proxy: its waker, once the loop gave one, goes stale when
 * the wait ends (a timeout its task has not seen yet, a cancel). */
int cn_chan_entry_live(lua_State *L, const chan_ref *c, const cn_line_entry *e);
/* The first live sender in line, or NULL. Senders whose wait ended (a
 * timeout their task has not seen yet, a cancel) leave the line here, and
 * their messages with them: those were never sent. */
cn_line_entry *cn_chan_line_first(lua_State *L, const chan_ref *c);
/* Wakes the sender of entry e, which has left the line. Its waker's errors
 * are dropped (after a second call: a transient error must not cost the
 * sender its wake): the message has moved (a receive has it, or it is queued),
 * and a loop's waker that raised has woken its task all the same
 * (src/loop/park.c); raising would take the message from the receive. */
void cn_chan_wake_entry(lua_State *L, const chan_ref *c, const cn_line_entry *e);
/* Calls the sender's select waker, if any, taking it off first. Its errors
 * are dropped, as cn_chan_wake_entry's: a receive that made room has its message. */
void cn_chan_wake_tx_selector(lua_State *L, const chan_ref *c);
/* After a receive made room in a bounded channel: the first senders in line
 * move their messages into the queue (each is woken to return true) while
 * there is room; room left over wakes the sender's select waker. */
void cn_chan_serve_line(lua_State *L, const chan_ref *c);
/* A rendezvous receive takes the message of the first sender in line and
 * wakes it. Pushes the message and returns 1, or returns 0 (nobody in line). */
int cn_chan_take_from_line(lua_State *L, const chan_ref *c);
/* Puts a sender holding the message at msg at the end of the line; returns
 * its id. slot/wid: its direct wait, or -1/0 for one through a proxy. */
lua_Integer cn_chan_join_line(lua_State *L, const chan_ref *c, int msg, int slot, lua_Integer wid);

/* Pushes the oldest message of ch's queue (at q) and takes it out. */
void cn_chan_take_oldest(lua_State *L, int q, cn_chan *ch);
/* Sends (the message at msg) without waiting: the number of results
 * pushed, or -1: the sender must wait. */
int cn_chan_send_try(lua_State *L, const chan_ref *c, int msg);
/* Waits in line (stack: 1 self, 2 msg, 3 ud, 4 queue, 5 link, 6 deadline). */
int cn_chan_send_wait(lua_State *L, const chan_ref *c, int first);
/* Receives without waiting: the number of results pushed, or -1. */
int cn_chan_recv_try(lua_State *L, const chan_ref *c);
/* Finds the channel of the sender (tx) or receiver at index 1 and pushes
 * its userdata, queue and link. Raises naming fname for anything else. */
void cn_chan_locate(lua_State *L, int tx, const char *fname);
/* Finds the channel of the link at index 1: stack 1 link, 2 ud, 3 queue,
 * 4 link; fills c. */
void cn_chan_link_ref(lua_State *L, chan_ref *c);

#endif
