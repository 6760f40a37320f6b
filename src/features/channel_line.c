/* channel_line: the line of senders of a bounded channel or a rendezvous
 * (cosock.channel, channel.c). A sender that cannot put its message in the
 * queue waits in line (src/lib/chan_line.c keeps the order, the aux table
 * the messages); a receive that makes room moves the first messages into
 * the queue and wakes their senders, a rendezvous receive takes the first
 * sender's message directly. A sender whose wait ended leaves the line with
 * its message, which was never sent. Stands on chan_state.h; calls nothing
 * of channel.c. */
#include "config.h"

#include <lauxlib.h>

#include "chan_state.h"
#include "park.h"

const char cn_chan_nil_mark = 0, cn_chan_delivered_mark = 0;

/* Pushes the channel's aux table, making it on first use. */
int cn_chan_push_aux(lua_State *L, const chan_ref *c) {
  if (cn_getuservalue(L, c->ud) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 4, 0);
    lua_newtable(L);
    lua_rawseti(L, -2, AUX_PEND);
    lua_newtable(L);
    lua_rawseti(L, -2, AUX_PROXY);
    lua_pushvalue(L, -1);
    cn_setuservalue(L, c->ud);
  }
  return lua_gettop(L);
}

/* aux[AUX_PEND][id] = the value on top (popped). */
void cn_chan_set_pend(lua_State *L, int aux, lua_Integer id) {
  lua_rawgeti(L, aux, AUX_PEND);
  lua_insert(L, -2);                           /* pend, value */
  lua_rawseti(L, -2, id);
  lua_pop(L, 1);
}

/* Pushes aux[AUX_PEND][id]; returns its type. */
int cn_chan_push_pend(lua_State *L, int aux, lua_Integer id) {
  int type;
  lua_rawgeti(L, aux, AUX_PEND);
  type = lua_rawgeti(L, -1, id);
  lua_remove(L, -2);
  return type;
}

/* Does the sender of entry e still wait? A direct wait: its ticket says. A
 * wait through a proxy: its waker, once the loop gave one, goes stale when
 * the wait ends (a timeout its task has not seen yet, a cancel). */
int cn_chan_entry_live(lua_State *L, const chan_ref *c, const cn_line_entry *e) {
  int aux, stale;
  if (e->slot >= 0) return ticket_task(c->lp, e->slot, e->wid) != NULL;
  aux = cn_chan_push_aux(L, c);
  lua_rawgeti(L, aux, AUX_PROXY);
  lua_rawgeti(L, -1, e->id);
  stale = cn_waker_stale(L, c->lp, -1);
  lua_settop(L, aux - 1);
  return !stale;
}

/* The first live sender in line, or NULL. Senders whose wait ended (a
 * timeout their task has not seen yet, a cancel) leave the line here, and
 * their messages with them: those were never sent. */
cn_line_entry *cn_chan_line_first(lua_State *L, const chan_ref *c) {
  cn_line *l = &c->ch->line;
  cn_line_entry *e;
  while ((e = cn_line_at(l, 0)) != NULL && !cn_chan_entry_live(L, c, e)) {
    lua_Integer id = e->id;
    int aux;
    cn_line_pop(l);
    aux = cn_chan_push_aux(L, c);
    lua_pushnil(L);
    cn_chan_set_pend(L, aux, id);
    lua_pop(L, 1);
  }
  return e;
}

/* Wakes the sender of entry e, which has left the line. Its waker's errors
 * are dropped (after a second call: a transient error must not cost the
 * sender its wake): the message has moved (a receive has it, or it is queued),
 * and a loop's waker that raised has woken its task all the same
 * (src/loop/park.c); raising would take the message from the receive. */
void cn_chan_wake_entry(lua_State *L, const chan_ref *c, const cn_line_entry *e) {
  int aux;
  if (e->slot >= 0) {
    cn_task *t = ticket_task(c->lp, e->slot, e->wid);
    if (t != NULL) cn_deliver(L, c->lp, t, 0);
    return;
  }
  aux = cn_chan_push_aux(L, c);
  lua_rawgeti(L, aux, AUX_PROXY);
  if (lua_rawgeti(L, -1, e->id) == LUA_TNIL) { /* no waker yet: its setwaker finds it done */
    lua_settop(L, aux - 1);
    return;
  }
  lua_pushnil(L);
  lua_rawseti(L, aux + 1, e->id);
  lua_replace(L, aux);                         /* waker, proxies */
  lua_settop(L, aux);
  lua_pushvalue(L, aux);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {       /* once more: a transient error (memory, an */
    lua_pop(L, 1);                             /* interrupt) must not cost the sender its wake; */
    lua_pushvalue(L, aux);                     /* a waker that ran already does nothing */
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Calls the sender's select waker, if any, taking it off first. Its errors
 * are dropped, as cn_chan_wake_entry's: a receive that made room has its message. */
void cn_chan_wake_tx_selector(lua_State *L, const chan_ref *c) {
  int aux;
  if (!c->ch->tx_waker) return;
  c->ch->tx_waker = 0;
  aux = cn_chan_push_aux(L, c);
  lua_rawgeti(L, aux, AUX_SENDR);
  lua_pushnil(L);
  lua_rawseti(L, aux, AUX_SENDR);
  lua_remove(L, aux);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) lua_pop(L, 1);
}

/* After a receive made room in a bounded channel: the first senders in line
 * move their messages into the queue (each is woken to return true) while
 * there is room; room left over wakes the sender's select waker. */
void cn_chan_serve_line(lua_State *L, const chan_ref *c) {
  cn_chan *ch = c->ch;
  cn_line_entry *e;
  while (queued(ch) < ch->cap && (e = cn_chan_line_first(L, c)) != NULL) {
    cn_line_entry got = *e;
    int aux = cn_chan_push_aux(L, c);
    cn_chan_push_pend(L, aux, got.id);
    enqueue(L, c, aux + 1);                    /* may raise: the sender is still in line */
    lua_pushlightuserdata(L, DELIVERED);
    cn_chan_set_pend(L, aux, got.id);
    cn_line_pop(&ch->line);
    lua_settop(L, aux - 1);
    cn_chan_wake_entry(L, c, &got);
  }
  if (queued(ch) < ch->cap && cn_line_len(&ch->line) == 0) cn_chan_wake_tx_selector(L, c);
}

/* A rendezvous receive takes the message of the first sender in line and
 * wakes it. Pushes the message and returns 1, or returns 0 (nobody in line). */
int cn_chan_take_from_line(lua_State *L, const chan_ref *c) {
  cn_line_entry *e = cn_chan_line_first(L, c), got;
  int aux;
  if (e == NULL) return 0;
  got = *e;
  aux = cn_chan_push_aux(L, c);
  cn_chan_push_pend(L, aux, got.id);
  lua_pushlightuserdata(L, DELIVERED);
  cn_chan_set_pend(L, aux, got.id);
  cn_line_pop(&c->ch->line);
  lua_remove(L, aux);                          /* msg */
  if (lua_touserdata(L, -1) == NILMARK) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
  cn_chan_wake_entry(L, c, &got);
  return 1;
}

/* Puts a sender holding the message at msg at the end of the line; returns
 * its id. slot/wid: its direct wait, or -1/0 for one through a proxy. */
lua_Integer cn_chan_join_line(lua_State *L, const chan_ref *c, int msg, int slot, lua_Integer wid) {
  cn_chan *ch = c->ch;
  cn_line_entry e;
  int aux = cn_chan_push_aux(L, c);
  if (cn_line_full(&ch->line)) {
    size_t cap = ch->line.cap ? ch->line.cap * 2 : 4;
    cn_line_entry *buf = lua_newuserdata(L, cap * sizeof *buf);
    /* Anchored before the move; nothing can collect the old one in between. */
    lua_rawseti(L, aux, AUX_BUF);
    cn_line_move(&ch->line, buf, cap);
  }
  e.id = ch->ids + 1;
  e.wid = wid;
  e.slot = slot;
  if (lua_type(L, msg) <= LUA_TNIL) lua_pushlightuserdata(L, NILMARK);
  else lua_pushvalue(L, msg);
  cn_chan_set_pend(L, aux, e.id);                      /* may raise (memory): not in line yet */
  ch->ids = e.id;
  cn_line_push(&ch->line, &e);                 /* cannot fail: room was made above */
  lua_settop(L, aux - 1);
  return e.id;
}

