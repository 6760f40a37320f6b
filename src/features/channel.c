/* channel: cosock.channel in C: cosock's unbounded channel, bounded channels
 * and rendezvous (capacity 0).
 *
 * Lua sees cosock 0.2.0's shape: new() returns a sender and a receiver, two
 * tables sharing one `link` table {queue, closed, waker}, and `#link.queue` is
 * the number of queued messages (the queue's __len). The state is a full
 * userdata (cn_chan) that the queue table holds under a private key:
 *   - the queued messages: queue[index(first)] .. queue[index(last)], a nil
 *     message stored as a private light userdata. A bounded channel keeps them
 *     in a ring of `capacity` keys, so the table's array part is reused;
 *   - the receiver's one waiter: a task parked in receive (a ticket: its slot
 *     and wait id, checked against the task before use, so a ticket whose wait
 *     ended wakes nobody) or the waker of a task in select (link.waker);
 *   - the line of senders waiting on a full bounded channel or a rendezvous
 *     (src/lib/chan_line.c). Each holds its message in the aux table until a
 *     receive moves it into the queue (a rendezvous: takes it) and wakes the
 *     sender, whose send then returns true. Senders are served in the order
 *     they came; one whose wait ended (timeout, cancel) leaves the line with
 *     its message, which was never sent;
 *   - the sender's one select waker (aux), called when there is room.
 * The aux table (the userdata's user value) is made when first needed: a
 * channel whose sends never wait has none.
 *
 * Speed: each sender and receiver carries its own `send` / `receive`, a C
 * closure over (loop, userdata, queue, link), so a call that need not wait is
 * one C call that touches the queue's slot and nothing else. The method tables
 * (cosock.channel.sender / .receiver) do the same for any sender or receiver,
 * finding the state through self.link.queue.
 *
 * Waits use the loop as wrapper.c does: in the task's own coroutine the
 * task parks directly (cn_prepark, one yield, no waker protocol); elsewhere
 * (a coroutine whose yields the task forwards) the call yields the usual
 * (recvt, sendt, timeout, INTERNAL) and the loop calls setwaker: the receiver
 * itself, or for a send a small proxy object standing for its place in line.
 *
 * The line of senders (bounded channels and rendezvous) is channel_line.c's,
 * cosock.op's tries and parks on channels channel_op.c's; what the three
 * files share (the state, the parts of a channel, the queue, the tickets,
 * the tries and waits of send and receive) is declared in chan_state.h.
 * The calls run one way: channel_op.c -> channel.c -> channel_line.c. */
#include "config.h"

#include <string.h>

#include <lauxlib.h>

#include "hooks.h"
#include "channel.h"
#include "chan_state.h"
#include "lib/chan_line.h"
#include "lib/clock.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "fidelity.h"
#include "messages.h"

static const char chan_key = 0, proxy_mt_key = 0;

/* Pushes the oldest message of ch's queue (at q) and takes it out. Lua 5.1
 * and LuaJIT take # of a table without its __len, and libraries read
 * #sender.link.queue: there the queue stays dense from 1 and the rest moves
 * down one, as cosock's own table.remove(queue, 1) does. (Setting keys that
 * exist allocates nothing.) */
void cn_chan_take_oldest(lua_State *L, int q, cn_chan *ch) {
  lua_Integer i = qindex(ch, ch->first);
  lua_rawgeti(L, q, i);
#if LUA_VERSION_NUM == 501
  for (; i < ch->last; i++) {                  /* (first is always 1 here) */
    lua_rawgeti(L, q, i + 1);
    lua_rawseti(L, q, i);
  }
  lua_pushnil(L);
  lua_rawseti(L, q, i);
  ch->last--;
#else
  lua_pushnil(L);
  lua_rawseti(L, q, i);
  if (ch->first == ch->last) ch->first = 1, ch->last = 0; /* empty: start again at 1 */
  else ch->first++;
#endif
  if (lua_touserdata(L, -1) == NILMARK) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
}

static void dequeue(lua_State *L, const chan_ref *c) { cn_chan_take_oldest(L, c->q, c->ch); }

/* Wakes whoever waits on the receiver: the task parked in receive, or the
 * select waker, taken off the link before it is called (a waker is used
 * once). Returns the status; on an error it is on top, and a waker that
 * raised (a fan-out stopped part-way: memory, the watchdog's interrupt) is
 * given back, unless another took its place or it is one of the loop's
 * (used once): whoever it had not woken yet waits on for the next message. */
static int wake_rx_p0(lua_State *L, const chan_ref *c);
static int wake_rx_p(lua_State *L, const chan_ref *c) {
  /* (a trace's wake cause: a send, unless a close is waking) */
  unsigned char was = cn_cause_set(c->lp, c->lp->hooks.cause ? c->lp->hooks.cause : CN_CAUSE_SEND);
  int status = wake_rx_p0(L, c);
  cn_cause_set(c->lp, was);
  return status;
}
static int wake_rx_p0(lua_State *L, const chan_ref *c) {
  cn_chan *ch = c->ch;
  cn_task *t = rx_ticket(c);
  int w, status;
  luaL_checkstack(L, 6, NULL);
  if (t != NULL) {                             /* (a direct park: cn_deliver cannot raise) */
    ch->rx_wid = 0;
    cn_deliver(L, c->lp, t, 0);
    return LUA_OK;
  }
  if (!ch->rx_waker) return LUA_OK;
  ch->rx_waker = 0;
  lua_pushliteral(L, "waker");
  lua_rawget(L, c->link);
  w = lua_gettop(L);
  lua_pushliteral(L, "waker");
  lua_pushnil(L);
  lua_rawset(L, c->link);
  lua_pushvalue(L, w);
  status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK && !ch->rx_waker && !cn_waker_stale(L, c->lp, w)) {
    lua_pushliteral(L, "waker");
    lua_pushvalue(L, w);
    lua_rawset(L, c->link);                    /* (the key's node is still there) */
    ch->rx_waker = 1;
  }
  lua_remove(L, w);
  return status;
}

static void wake_rx(lua_State *L, const chan_ref *c) {
  if (wake_rx_p(L, c) != LUA_OK) lua_error(L);
}

/* Whether close wakes every waiter and a closed end is ready to select:
 * with set_close_wakes(true), or on a channel made so (close_ready). Else
 * cosock's close: see close_channel. */
static int close_wakes(const chan_ref *c) { return cn_close_wakes(c->lp) || c->ch->close_ready; }

/* True when a select on the sender is ready: a send would find room (or,
 * when close wakes, the channel is closed). */
static int tx_ready(lua_State *L, const chan_ref *c) {
  cn_chan *ch = c->ch;
  if (ch->cap < 0 || (ch->closed && close_wakes(c))) return 1;
  if (cn_chan_line_first(L, c) != NULL) return 0;
  if (ch->cap > 0) return queued(ch) < ch->cap;
  return queued(ch) == 0 && rx_waiting(c);    /* rendezvous: a receiver waits */
}

/* True when a select on the receiver is ready: a message is there (as
 * cosock's setwaker sees it; a closed, empty receiver is not, unless close
 * wakes). */
static int rx_ready(lua_State *L, const chan_ref *c) {
  cn_chan *ch = c->ch;
  return ch->first <= ch->last || (ch->closed && close_wakes(c)) ||
         (ch->cap == 0 && cn_chan_line_first(L, c) != NULL);
}

/* close() from the sender (tx) or the receiver. Every sender in line leaves
 * it, unsent (its send returns nil, "closed"). Queued messages stay for
 * receive. Who is woken is cosock's rule: its sender:close calls the
 * receiver's waker, its receiver:close wakes nobody. So a close wakes the
 * waiters of the other end, once, and those of its own end wait for their
 * timeout (then their call sees the close); with close_wakes, everyone. */
static void close_channel(lua_State *L, const chan_ref *c, int tx) {
  cn_chan *ch = c->ch;
  cn_line_entry *e;
  int all = close_wakes(c);
  unsigned char was = cn_cause_set(c->lp, CN_CAUSE_CLOSE); /* (a trace's wake cause) */
  ch->closed = 1;
  lua_pushliteral(L, CN_MSG_CLOSED);
  lua_pushboolean(L, 1);
  lua_rawset(L, c->link);
  while ((e = cn_line_at(&ch->line, 0)) != NULL) {
    cn_line_entry got = *e;
    int aux = cn_chan_push_aux(L, c);
    cn_line_pop(&ch->line);
    lua_pushnil(L);
    cn_chan_set_pend(L, aux, got.id);
    lua_pop(L, 1);
    if (all || !tx) cn_chan_wake_entry(L, c, &got);
  }
  if (all || tx) wake_rx(L, c);
  if (all || !tx) cn_chan_wake_tx_selector(L, c);
  cn_cause_set(c->lp, was);
}

/* ---------------------------------------------------------------- timeouts */

/* The first wait of a call: reads self.timeout (index 1). Returns 1 when the
 * call fails at once (a timeout of 0 or less); else fills tmo and keeps
 * the deadline at index dl. */
static int first_timeout(lua_State *L, int dl, cn_tmo *tmo) {
  int isnum;
  double v;
  lua_pushliteral(L, CN_MSG_TIMEOUT);
  tmo->set = 0;
  if (lua_rawget(L, 1) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  v = lua_tonumberx(L, -1, &isnum);
  if (!isnum || v != v) return luaL_error(L, "cosock.channel: the timeout is not a number");
  *tmo = cn_tmo_of(L, -1);                     /* as given: metadata shows it so */
  lua_pop(L, 1);
  if (v <= 0) return 1;
  lua_pushnumber(L, cn_clock_now() + v);
  lua_replace(L, dl);
  return 0;
}

/* A later wait of the same call: the time left before its deadline. */
static int time_left(lua_State *L, int dl, cn_tmo *tmo) {
  tmo->set = (unsigned char)!lua_isnil(L, dl);
  tmo->is_int = 0;
  if (!tmo->set) return 0;
  tmo->secs = lua_tonumber(L, dl) - cn_clock_now();
  return tmo->secs <= 0;
}

/* Pushes a wait's timeout as a forwarded yield gives it (nil: none). */
static void push_tmo(lua_State *L, const cn_tmo *tmo) {
  if (!tmo->set) lua_pushnil(L);
  else if (tmo->is_int) lua_pushinteger(L, tmo->ival);
  else lua_pushnumber(L, tmo->secs);
}

/* ---------------------------------------------------------------- send */

static int proxy_setwaker(lua_State *L);

/* A send's wake of the receiver raised (error on top) after its message at
 * msg was queued: a send that raises has sent nothing, so the message leaves
 * the queue and the error goes on; if a receive took it already (the waker
 * received), the send has happened: true. */
static int queued_wake_failed(lua_State *L, const chan_ref *c, int msg) {
  cn_chan *ch = c->ch;
  int here = 0;
  if (queued(ch) > 0) {
    lua_rawgeti(L, c->q, qindex(ch, ch->last));
    here = lua_type(L, msg) <= LUA_TNIL ? lua_touserdata(L, -1) == NILMARK : lua_rawequal(L, -1, msg);
    lua_pop(L, 1);
  }
  if (!here) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_rawseti(L, c->q, qindex(ch, ch->last));  /* (an existing key: no allocation) */
  if (ch->first == ch->last) ch->first = 1, ch->last = 0;
  else ch->last--;
  return lua_error(L);
}

/* The same for a send in line (id) whose wake of the receiver raised: it
 * leaves the line, unsent, or returns true when a receive took it. direct:
 * it had made a direct wait, which it gives up. */
static int line_wake_failed(lua_State *L, const chan_ref *c, lua_Integer id, int direct) {
  int err = lua_gettop(L), aux = cn_chan_push_aux(L, c);
  int type = cn_chan_push_pend(L, aux, id);
  int taken = type == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == DELIVERED;
  if (direct) cn_prepark_taken(c->lp, cn_current_slot(c->lp));
  cn_line_remove(&c->ch->line, id);
  lua_pushnil(L);
  cn_chan_set_pend(L, aux, id);                        /* (an existing key: no allocation) */
  if (!taken) {
    lua_settop(L, err);
    return lua_error(L);
  }
  lua_settop(L, err - 1);
  lua_pushboolean(L, 1);
  return 1;
}

/* Sends the message at msg if that needs no wait. Returns the number of
 * results pushed (true; false, "closed"), or -1: the sender must wait. */
int cn_chan_send_try(lua_State *L, const chan_ref *c, int msg) {
  cn_chan *ch = c->ch;
  if (ch->closed) {
    lua_pushboolean(L, 0);
    lua_pushliteral(L, CN_MSG_CLOSED);
    return 2;
  }
  /* Room in a bounded channel means nobody is in line (a receive serves the
   * line when it makes room); should someone be, they go first. */
  if (ch->cap > 0 && queued(ch) < ch->cap && cn_line_len(&ch->line) > 0) cn_chan_serve_line(L, c);
  /* A rendezvous send always waits in line: it is over when a receive has
   * taken its message (and returned it), not before. */
  if (ch->cap < 0 || (ch->cap > 0 && queued(ch) < ch->cap)) {
    enqueue(L, c, msg);
    if (wake_rx_p(L, c) != LUA_OK) return queued_wake_failed(L, c, msg);
    lua_pushboolean(L, 1);
    return 1;
  }
  return -1;
}

static int send_k(lua_State *L, int status, lua_KContext ctx);

/* Waits in line. Stack: 1 self, 2 msg, 3 ud, 4 queue, 5 link, 6 deadline. */
int cn_chan_send_wait(lua_State *L, const chan_ref *c, int first) {
  cn_tmo tmo;
  lua_Integer wid, id;
  if (first ? first_timeout(L, 6, &tmo) : time_left(L, 6, &tmo)) return fail(L, "timeout");
  wid = cn_prepark(L, c->lp, K_SEND, &tmo, 0);
  cn_what_set(c->lp, CN_WHAT_CHANNEL_SEND);    /* (for a trace: what it waits on) */
  if (wid != 0) {
    id = cn_chan_join_line(L, c, 2, cn_current_slot(c->lp), wid);
    /* a rendezvous: the receiver can take it */
    if (c->ch->cap == 0 && wake_rx_p(L, c) != LUA_OK) return line_wake_failed(L, c, id, 1);
    lua_settop(L, 6);
    lua_pushvalue(L, 1);
    return cn_yieldk(L, 1, (lua_KContext)id, send_k);
  }
  /* Through the protocol: the proxy stands for this place in line. Made
   * first, so that a failed allocation leaves nobody in line; and nobody
   * joins it from where no yield can go (outside any coroutine). */
  if (!cn_isyieldable(L)) {
    cn_wait_outside_task(L);                   /* raises on the main thread */
    return luaL_error(L, "attempt to yield from outside a coroutine");
  }
  lua_settop(L, 6);
  lua_pushnil(L);                              /* recvt */
  lua_createtable(L, 1, 0);                    /* sendt = {proxy} */
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 4);                         /* the queue: it names its channel */
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, c->ch->ids + 1);          /* the id cn_chan_join_line gives */
  lua_rawseti(L, -2, 2);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &proxy_mt_key); /* setwaker, and a name */
  lua_setmetatable(L, -2);
  lua_rawseti(L, -2, 1);
  push_tmo(L, &tmo);
  lua_pushlightuserdata(L, CN_INTERNAL);
  id = cn_chan_join_line(L, c, 2, -1, 0);
  if (c->ch->cap == 0 && wake_rx_p(L, c) != LUA_OK) return line_wake_failed(L, c, id, 0);
  return cn_yieldk(L, 4, (lua_KContext)id, send_k);
}

/* After a wait in line: delivered (true), closed, timed out, or wait again. */
static int send_k(lua_State *L, int status, lua_KContext ctx) {
  lua_Integer id = (lua_Integer)ctx;
  int timed_out = cn_resumed_timeout(L, -1);
  int aux, type, r;
  chan_ref c;
  (void)status;
  luaL_checkstack(L, 12, NULL);                /* (the resume values used some of its room) */
  lua_settop(L, 6);
  ref_at(L, &c, 3);
  aux = cn_chan_push_aux(L, &c);
  type = cn_chan_push_pend(L, aux, id);
  if (type == LUA_TLIGHTUSERDATA && lua_touserdata(L, -1) == DELIVERED) {
    lua_pushnil(L);
    cn_chan_set_pend(L, aux, id);
    lua_pushboolean(L, 1);
    return 1;
  }
  if (type != LUA_TNIL) {                      /* still in line: leave it, unsent */
    cn_line_remove(&c.ch->line, id);
    lua_pushnil(L);
    cn_chan_set_pend(L, aux, id);
  }
  lua_settop(L, 6);
  if (c.ch->closed) return fail(L, "closed");
  if (cn_wait_end(L, c.lp, timed_out)) return fail(L, "timeout");
  r = cn_chan_send_try(L, &c, 2);
  return r >= 0 ? r : cn_chan_send_wait(L, &c, 0);
}

/* send with stack 1 self, 2 msg, 3 ud, 4 queue, 5 link, 6 nil. */
static int send_from(lua_State *L) {
  chan_ref c;
  int r;
  ref_at(L, &c, 3);
  r = cn_chan_send_try(L, &c, 2);
  return r >= 0 ? r : cn_chan_send_wait(L, &c, 1);
}

/* ---------------------------------------------------------------- receive */

/* Receives without waiting if possible. Returns the number of results
 * pushed (the message; nil, "closed"), or -1: the receiver must wait. */
int cn_chan_recv_try(lua_State *L, const chan_ref *c) {
  cn_chan *ch = c->ch;
  if (ch->first <= ch->last) {
    dequeue(L, c);
    if (ch->cap > 0 && (cn_line_len(&ch->line) > 0 || ch->tx_waker)) cn_chan_serve_line(L, c);
    return 1;
  }
  if (ch->cap == 0 && cn_line_len(&ch->line) > 0 && cn_chan_take_from_line(L, c)) return 1;
  if (ch->closed) return fail(L, "closed");
  return -1;
}

static int recv_k(lua_State *L, int status, lua_KContext ctx);

/* Waits for a message. Stack: 1 self, 2 ud, 3 queue, 4 link, 5 deadline. */
static int recv_wait(lua_State *L, const chan_ref *c, int first) {
  cn_tmo tmo;
  lua_Integer wid = 0;
  if (first ? first_timeout(L, 5, &tmo) : time_left(L, 5, &tmo)) return fail(L, "timeout");
  cn_what_set(c->lp, CN_WHAT_CHANNEL_RECV);    /* (for a trace: what it waits on) */
  /* One waiter per channel: with one there already, the usual tuple makes the
   * loop call setwaker, which raises cosock's error, from the loop. */
  if (!rx_waiting(c) && (wid = cn_prepark(L, c->lp, K_RECV, &tmo, 0)) != 0) {
    c->ch->rx_slot = cn_current_slot(c->lp);
    c->ch->rx_wid = wid;
    c->ch->rx_op = 0;
    if (c->ch->cap == 0) cn_chan_wake_tx_selector(L, c); /* a rendezvous has room now */
    lua_settop(L, 5);
    lua_pushvalue(L, 1);
    return cn_yieldk(L, 1, (lua_KContext)wid, recv_k);
  }
  /* What cosock's receive yields: ({rx}, nil, timeout as given). */
  lua_settop(L, 5);
  lua_createtable(L, 1, 0);                    /* recvt = {self} */
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  lua_pushnil(L);
  push_tmo(L, &tmo);
  return cn_yieldk(L, 3, 0, recv_k);
}

/* After a wait: a ticket still on the channel that is this wait's (ctx; it
 * timed out) is taken off; then the receive tries again. */
static int recv_k(lua_State *L, int status, lua_KContext ctx) {
  int timed_out = cn_resumed_timeout(L, -1), r;
  chan_ref c;
  (void)status;
  luaL_checkstack(L, 12, NULL);
  lua_settop(L, 5);
  ref_at(L, &c, 2);
  if (ctx != 0 && c.ch->rx_wid == (lua_Integer)ctx) c.ch->rx_wid = 0;
  r = cn_chan_recv_try(L, &c);
  if (r >= 0) return r;
  if (cn_wait_end(L, c.lp, timed_out)) return fail(L, "timeout");
  return recv_wait(L, &c, 0);
}

/* receive with stack 1 self, 2 ud, 3 queue, 4 link, 5 nil. */
static int receive_from(lua_State *L) {
  chan_ref c;
  int r;
  ref_at(L, &c, 2);
  r = cn_chan_recv_try(L, &c);
  return r >= 0 ? r : recv_wait(L, &c, 1);
}

/* ---------------------------------------------------------------- methods */

/* Finds the channel of the sender (tx) or receiver at index 1 and pushes its
 * userdata, queue and link. Raises naming fname for anything else. */
void cn_chan_locate(lua_State *L, int tx, const char *fname) {
  cn_chan *ch = NULL;
  int base = lua_gettop(L) + 1;
  luaL_checkstack(L, 4, NULL);
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_pushliteral(L, "link");
    if (lua_rawget(L, 1) == LUA_TTABLE) {
      lua_pushliteral(L, "queue");
      if (lua_rawget(L, base) == LUA_TTABLE && lua_rawgetp(L, base + 1, &chan_key) == LUA_TUSERDATA)
        ch = lua_touserdata(L, base + 2);
    }
  }
  if (ch == NULL || (tx ? ch->tx : ch->rx) != lua_topointer(L, 1))
    cn_argerror(L, 1, fname, "cosock.channel %s expected, got %s",
               tx ? "sender" : "receiver",
               ch != NULL ? (tx ? "a receiver" : "a sender") : luaL_typename(L, 1));
  lua_rotate(L, base, 1);                      /* ud, link, queue */
  lua_rotate(L, base + 1, 1);                  /* ud, queue, link */
}

/* sender.send(self, msg) */
static int m_send(lua_State *L) {
  CN_RESUMABLE(L);
  lua_settop(L, 2);
  cn_chan_locate(L, 1, "send");
  lua_pushnil(L);
  return send_from(L);
}

/* receiver.receive(self) */
static int m_receive(lua_State *L) {
  CN_RESUMABLE(L);
  lua_settop(L, 1);
  cn_chan_locate(L, 0, "receive");
  lua_pushnil(L);
  return receive_from(L);
}

/* channel_try_send(tx, msg) / channel_try_receive(rx): send / receive as
 * with a timeout of 0, without touching the end's own timeout (cosock.op's
 * tries: an error between setting and restoring a timeout would keep it).
 * channel_send_untimed(tx, msg): send waiting without the sender's timeout
 * (cosock.op's offers). */
static int l_try_send(lua_State *L) {
  chan_ref c;
  int r;
  lua_settop(L, 2);
  cn_chan_locate(L, 1, "send");
  lua_pushnil(L);
  ref_at(L, &c, 3);
  r = cn_chan_send_try(L, &c, 2);
  return r >= 0 ? r : fail(L, "timeout");
}

static int l_try_receive(lua_State *L) {
  chan_ref c;
  int r;
  lua_settop(L, 1);
  cn_chan_locate(L, 0, "receive");
  lua_pushnil(L);
  ref_at(L, &c, 2);
  r = cn_chan_recv_try(L, &c);
  return r >= 0 ? r : fail(L, "timeout");
}

/* channel_ready(rx) -> whether a receive would not wait (cosock.op: it then
 * receives in a tail call, so that nothing of its own runs between the
 * message's taking and its return, where an error would lose it). */
static int l_ready(lua_State *L) {
  chan_ref c;
  lua_settop(L, 1);
  cn_chan_locate(L, 0, "receive");
  ref_at(L, &c, 2);
  /* (not rx_ready: a closed, empty receiver is not ready to select, as on
   * cosock, but its receive returns nil, "closed" without waiting) */
  lua_pushboolean(L, rx_ready(L, &c) || c.ch->closed);
  return 1;
}

static int l_send_untimed(lua_State *L) {
  chan_ref c;
  int r;
  CN_RESUMABLE(L);
  lua_settop(L, 2);
  cn_chan_locate(L, 1, "send");
  lua_pushnil(L);                              /* 6: no deadline */
  ref_at(L, &c, 3);
  r = cn_chan_send_try(L, &c, 2);
  return r >= 0 ? r : cn_chan_send_wait(L, &c, 0);
}

/* The sender's own send: the common case inline (nothing waits, no line). */
static int fast_send(lua_State *L) {
  cn_chan *ch = lua_touserdata(L, UPV(UP_CHAN));
  lua_Integer pos;
  CN_RESUMABLE(L);
  if (ch->closed || lua_topointer(L, 1) != ch->tx ||
      (ch->cap >= 0 && (ch->cap == 0 || queued(ch) >= ch->cap || cn_line_len(&ch->line) > 0))) {
    if (lua_topointer(L, 1) != ch->tx) return m_send(L); /* another self: its checks */
    lua_settop(L, 2);
    lua_pushvalue(L, UPV(UP_CHAN));
    lua_pushvalue(L, UPV(UP_QUEUE));
    lua_pushvalue(L, UPV(UP_LINK));
    lua_pushnil(L);
    return send_from(L);
  }
  pos = ch->last + 1;
  if (lua_type(L, 2) <= LUA_TNIL) lua_pushlightuserdata(L, NILMARK);
  else lua_pushvalue(L, 2);
  lua_rawseti(L, UPV(UP_QUEUE), qindex(ch, pos));
  ch->last = pos;
  if (ch->rx_wid != 0 || ch->rx_waker) {
    chan_ref c;
    ref_up(L, &c, ch);
    if (wake_rx_p(L, &c) != LUA_OK) return queued_wake_failed(L, &c, 2);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* The receiver's own receive: the common case inline (a message is queued). */
static int fast_receive(lua_State *L) {
  cn_chan *ch = lua_touserdata(L, UPV(UP_CHAN));
  CN_RESUMABLE(L);
  if (ch->first > ch->last || lua_topointer(L, 1) != ch->rx) {
    if (lua_topointer(L, 1) != ch->rx) return m_receive(L);
    lua_settop(L, 1);
    lua_pushvalue(L, UPV(UP_CHAN));
    lua_pushvalue(L, UPV(UP_QUEUE));
    lua_pushvalue(L, UPV(UP_LINK));
    lua_pushnil(L);
    return receive_from(L);
  }
  cn_chan_take_oldest(L, UPV(UP_QUEUE), ch);
  if (ch->cap > 0 && (cn_line_len(&ch->line) > 0 || ch->tx_waker)) {
    chan_ref c;
    ref_up(L, &c, ch);
    cn_chan_serve_line(L, &c);
  }
  return 1;
}

static int close_end(lua_State *L, int tx) {
  chan_ref c;
  lua_settop(L, 1);
  cn_chan_locate(L, tx, "close");
  ref_at(L, &c, 2);
  close_channel(L, &c, tx);
  return 0;
}

static int m_tx_close(lua_State *L) { return close_end(L, 1); }
static int m_rx_close(lua_State *L) { return close_end(L, 0); }

/* settimeout(t): how long a send / receive may wait (nil: no limit; 0 or
 * less: it fails at once instead of waiting). Returns nothing, as cosock's
 * receiver:settimeout. A number is kept as given (an integer stays one). */
static int settimeout_end(lua_State *L, int tx) {
  lua_settop(L, 2);
  cn_chan_locate(L, tx, "settimeout");
  lua_pushliteral(L, CN_MSG_TIMEOUT);
  if (!lua_isnil(L, 2)) {
    int isnum;
    lua_Number n = lua_tonumberx(L, 2, &isnum);
    if (!isnum || n != n)
      return cn_argerror(L, 1, "settimeout", "number expected, got %s",
                        isnum ? "nan" : luaL_typename(L, 2));
    if (lua_type(L, 2) == LUA_TNUMBER) lua_pushvalue(L, 2);
    else lua_pushnumber(L, n);                 /* a numeric string: its number */
  } else {
    lua_pushnil(L);
  }
  lua_rawset(L, 1);
  return 0;
}

static int m_tx_settimeout(lua_State *L) { return settimeout_end(L, 1); }
static int m_rx_settimeout(lua_State *L) { return settimeout_end(L, 0); }

/* Raises cosock's error for a kind other than want (kind at index 2). */
static void check_kind(lua_State *L, const char *want) {
  const char *kind = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  if (kind == NULL || strcmp(kind, want) != 0)
    cn_wake_kind_error(L, 2);
}

/* setwaker(kind, nil) with the waker set now on top (popped): is it the
 * waker of a wait that goes on? The loop takes a task's waker back only
 * after making it stale; a waker fires once and is then gone from the
 * channel, so a task woken while it waited in select may find, when the
 * loop takes its waker back, another task's live waker in its place: that
 * one stays. */
static int set_by_another_wait(lua_State *L, const chan_ref *c) {
  int live = cn_waker_live(L, c->lp, -1);
  lua_pop(L, 1);
  return live;
}

/* receiver:setwaker("recvr", fn): the waker protocol, one waiter at a time;
 * a waker set when a receive would not wait is called at once. */
static int m_rx_setwaker(lua_State *L) {
  chan_ref c;
  lua_settop(L, 3);
  check_kind(L, "recvr");
  cn_chan_locate(L, 0, "setwaker");
  ref_at(L, &c, 4);
  if (lua_isnil(L, 3)) {
    /* The loop takes back the waker of a task in select. A ticket is
     * another task's wait in receive, which setwaker never touches. */
    lua_pushliteral(L, "waker");
    lua_rawget(L, c.link);
    if (c.ch->rx_waker && !set_by_another_wait(L, &c)) {
      c.ch->rx_waker = 0;
      lua_pushliteral(L, "waker");
      lua_pushnil(L);
      lua_rawset(L, c.link);
    }
    return 0;
  }
  if (rx_waiting(&c))
    return luaL_error(L, CN_MSG_WAKER_SET ", receive can't be waited on from multiple places at once");
  lua_pushliteral(L, "waker");
  lua_pushvalue(L, 3);
  lua_rawset(L, c.link);
  c.ch->rx_waker = 1;
  if (rx_ready(L, &c)) wake_rx(L, &c);
  else if (c.ch->cap == 0) cn_chan_wake_tx_selector(L, &c); /* a rendezvous has room now */
  return 0;
}

/* sender:setwaker("sendr", fn): select on a sender waits for room (for a
 * rendezvous: a receiver waiting), one task at a time; a waker set when a
 * send would not wait is called at once. */
static int m_tx_setwaker(lua_State *L) {
  chan_ref c;
  int aux;
  lua_settop(L, 3);
  check_kind(L, "sendr");
  cn_chan_locate(L, 1, "setwaker");
  ref_at(L, &c, 4);
  if (lua_isnil(L, 3)) {
    aux = cn_chan_push_aux(L, &c);
    lua_rawgeti(L, aux, AUX_SENDR);
    if (c.ch->tx_waker && !set_by_another_wait(L, &c)) {
      c.ch->tx_waker = 0;
      lua_pushnil(L);
      lua_rawseti(L, aux, AUX_SENDR);
    }
    return 0;
  }
  if (c.ch->tx_waker)
    return luaL_error(L, CN_MSG_WAKER_SET ", send can't be waited on from multiple places at once");
  aux = cn_chan_push_aux(L, &c);
  lua_pushvalue(L, 3);
  lua_rawseti(L, aux, AUX_SENDR);
  c.ch->tx_waker = 1;
  if (tx_ready(L, &c)) cn_chan_wake_tx_selector(L, &c);
  return 0;
}

/* proxy:setwaker("sendr", fn): the protocol for a send waiting in line in a
 * coroutine whose yields the task forwards. Proxy: {queue, id}; the channel
 * is the queue's, under chan_key (which Lua cannot forge). nil (the
 * loop ends the wait: timeout, cancel, or after the wake) takes the send out
 * of line, unsent, unless it was already served. */
static int proxy_setwaker(lua_State *L) {
  chan_ref c;
  lua_Integer id;
  int aux;
  lua_settop(L, 3);
  check_kind(L, "sendr");
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_rawgeti(L, 1, 1) != LUA_TTABLE || lua_rawgetp(L, 4, &chan_key) != LUA_TUSERDATA)
    return luaL_argerror(L, 1, "a channel's send proxy expected");
  lua_remove(L, 4);                            /* 4: ud */
  lua_rawgeti(L, 1, 2);
  id = lua_tointeger(L, 5);
  lua_pop(L, 1);
  memset(&c, 0, sizeof c);
  c.ch = lua_touserdata(L, 4);
  c.ud = 4;
  aux = cn_chan_push_aux(L, &c);                       /* 5 */
  lua_rawgeti(L, aux, AUX_PROXY);              /* 6 */
  if (lua_isnil(L, 3)) {
    if (lua_rawgeti(L, 6, id) != LUA_TNIL) {
      lua_pushnil(L);
      lua_rawseti(L, 6, id);
    }
    if (cn_line_remove(&c.ch->line, id)) {
      lua_pushnil(L);
      cn_chan_set_pend(L, aux, id);
    }
    return 0;
  }
  if (cn_line_find(&c.ch->line, id) != NULL) {
    lua_pushvalue(L, 3);
    lua_rawseti(L, 6, id);
    return 0;
  }
  lua_pushvalue(L, 3);                         /* served or closed already: ready now */
  lua_call(L, 0, 0);
  return 0;
}

static int queue_len(lua_State *L) {
  cn_chan *ch;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_rawgetp(L, 1, &chan_key);
  ch = lua_touserdata(L, -1);
  lua_pushinteger(L, ch != NULL ? queued(ch) : (lua_Integer)lua_rawlen(L, 1));
  return 1;
}

/* ---------------------------------------------------------------- module */

static void make_end(lua_State *L, int mt, lua_CFunction fast, const char *name) {
  lua_createtable(L, 0, 2);                    /* 2 ud, 3 queue, 4 link: see channel_new */
  lua_pushvalue(L, 4);
  lua_setfield(L, -2, "link");
  lua_pushvalue(L, UPV(NEW_LOOP));
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, 4);
  lua_pushcclosure(L, fast, 4);
  lua_setfield(L, -2, name);
  {
    const char *names[2];
    names[0] = name;
    names[1] = NULL;
    cn_lift_fields(L, -1, names);
  }
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
}

/* channel_new([capacity]) -> sender, receiver. No capacity (nil): cosock's
 * unbounded channel; 0: a rendezvous; n > 0: at most n queued messages. */
static int l_new(lua_State *L) {
  lua_Integer cap = UNBOUNDED;
  cn_chan *ch;
  if (!lua_isnoneornil(L, 1)) {
    int isint = 0;
    if (lua_type(L, 1) == LUA_TNUMBER) cap = lua_tointegerx(L, 1, &isint);
    if (!isint || cap < 0) {
      if (lua_type(L, 1) == LUA_TNUMBER)
        return cn_argerror(L, 1, "new", "capacity must be a non-negative integer, got %s",
                          luaL_tolstring(L, 1, NULL));
      return cn_argerror(L, 1, "new", "capacity must be a non-negative integer or nil, got %s",
                        luaL_typename(L, 1));
    }
  }
  lua_settop(L, 1);
  ch = lua_newuserdata(L, sizeof *ch);         /* 2 */
  memset(ch, 0, sizeof *ch);
  ch->first = 1;
  ch->last = 0;
  ch->cap = cap;
  cn_line_init(&ch->line, NULL, 0);
  lua_createtable(L, 0, 1);                    /* 3 queue */
  lua_pushvalue(L, 2);
  lua_rawsetp(L, 3, &chan_key);
  lua_pushvalue(L, UPV(NEW_QUEUE_MT));
  lua_setmetatable(L, 3);
  lua_createtable(L, 0, 3);                    /* 4 link */
  lua_pushvalue(L, 3);
  lua_setfield(L, 4, "queue");
  lua_pushboolean(L, 0);
  lua_setfield(L, 4, "closed");
  make_end(L, UPV(NEW_TX_MT), fast_send, "send");        /* 5 */
  make_end(L, UPV(NEW_RX_MT), fast_receive, "receive");  /* 6 */
  ch->tx = lua_topointer(L, 5);
  ch->rx = lua_topointer(L, 6);
  return 2;
}

/* Finds the channel of the link at index 1: stack 1 link, 2 ud, 3 queue,
 * 4 link; fills c. */
void cn_chan_link_ref(lua_State *L, chan_ref *c) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_pushliteral(L, "queue");
  if (lua_rawget(L, 1) != LUA_TTABLE || lua_rawgetp(L, 2, &chan_key) != LUA_TUSERDATA)
    luaL_argerror(L, 1, "a cosock.channel link expected");
  lua_insert(L, 2);                            /* link, ud, queue */
  lua_pushvalue(L, 1);
  ref_at(L, c, 2);
}

/* channel_waiting(link) -> true while a task waits to receive (a parked
 * receive or a select). For tests. */
static int l_waiting(lua_State *L) {
  chan_ref c;
  cn_chan_link_ref(L, &c);
  lua_pushboolean(L, rx_waiting(&c));
  return 1;
}

/* channel_close_ready(link): on this channel close wakes every waiter and a
 * closed end is ready to select, whatever set_close_wakes says
 * (cosock.timer.timeout's channel, which is closed to say "time is up"). */
static int l_close_ready(lua_State *L) {
  chan_ref c;
  cn_chan_link_ref(L, &c);
  c.ch->close_ready = 1;
  return 0;
}

/* channel_senders(link) -> how many senders wait in line (those whose wait
 * ended are not counted). For tests. */
static int l_senders(lua_State *L) {
  chan_ref c;
  lua_Integer n = 0;
  size_t i;
  cn_chan_link_ref(L, &c);
  for (i = 0; i < cn_line_len(&c.ch->line); i++)
    if (cn_chan_entry_live(L, &c, cn_line_at(&c.ch->line, i))) n++;
  lua_pushinteger(L, n);
  return 1;
}

void cn_channel_open(lua_State *L) {
  static const luaL_Reg tx_methods[] = {
    {"send", m_send}, {"close", m_tx_close}, {"settimeout", m_tx_settimeout},
    {"setwaker", m_tx_setwaker}, {NULL, NULL}
  };
  static const luaL_Reg rx_methods[] = {
    {"receive", m_receive}, {"close", m_rx_close}, {"settimeout", m_rx_settimeout},
    {"setwaker", m_rx_setwaker}, {NULL, NULL}
  };
  static const char *const tx_waits[] = {"send", NULL}, *const rx_waits[] = {"receive", NULL};
  static const luaL_Reg funcs[] = {
    {"channel_waiting", l_waiting}, {"channel_senders", l_senders},
    {"channel_close_ready", l_close_ready},
    {"channel_try_send", l_try_send}, {"channel_try_receive", l_try_receive},
    {"channel_send_untimed", l_send_untimed}, {"channel_ready", l_ready},
    {NULL, NULL}
  };
  static const char *const untimed[] = {"channel_send_untimed", NULL};
  int loop = lua_absindex(L, -2), mod = lua_absindex(L, -1);
  luaL_checkstack(L, 8, NULL);
  lua_pushvalue(L, loop);                      /* for channel_new: loop */
  lua_newtable(L);                             /* sender methods */
  lua_pushvalue(L, loop);
  luaL_setfuncs(L, tx_methods, 1);
  cn_lift_fields(L, -1, tx_waits);
  lua_pushvalue(L, -1);
  lua_setfield(L, mod, "channel_sender");
  lua_createtable(L, 0, 1);                    /* its metatable */
  lua_insert(L, -2);
  lua_setfield(L, -2, "__index");              /* loop, tx_mt */
  lua_newtable(L);                             /* receiver methods */
  lua_pushvalue(L, loop);
  luaL_setfuncs(L, rx_methods, 1);
  cn_lift_fields(L, -1, rx_waits);
  lua_pushvalue(L, -1);
  lua_setfield(L, mod, "channel_receiver");
  lua_createtable(L, 0, 1);
  lua_insert(L, -2);
  lua_setfield(L, -2, "__index");              /* loop, tx_mt, rx_mt */
  lua_createtable(L, 0, 1);                    /* the queues' metatable */
  lua_pushcfunction(L, queue_len);
  lua_setfield(L, -2, "__len");                /* loop, tx_mt, rx_mt, queue_mt */
  lua_pushcclosure(L, l_new, 4);
  lua_setfield(L, mod, "channel_new");
  /* The send proxies' metatable: their setwaker, and a name that the
   * deadlock report (lua/cosock/deadlock.lua) knows them by. */
  lua_createtable(L, 0, 2);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, proxy_setwaker);
  lua_setfield(L, -2, "setwaker");
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "cosock.channel send");
  lua_setfield(L, -2, "__name");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &proxy_mt_key);
  lua_pushvalue(L, loop);
  luaL_setfuncs(L, funcs, 1);
  cn_lift_fields(L, mod, untimed);
}
