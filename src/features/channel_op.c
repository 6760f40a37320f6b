/* channel_op: cosock.op on channels. A receiver's bound try (op's recv
 * tries it without waiting), a perform's first try of its operations in
 * order (try_first), and its wait parked directly on every receiver it waits
 * on (park_all: one ticket per channel, one wait), with the unpark that
 * hands a channel back to a plain receive. Stands on channel.c
 * (chan_state.h); channel.c knows nothing of it. */
#include "config.h"

#include <string.h>

#include <lauxlib.h>

#include "hooks.h"
#include "messages.h"
#include "chan_state.h"
#include "channel.h"
#include "park.h"

/* A receiver's bound try (cosock.op's recv): a receive that never waits,
 * with the channel's parts as upvalues as in the receiver's own receive (no
 * lookup per call). Returns the message, or nil, "closed", or the mark
 * NOMSG when there is nothing to take; never touches the end's timeout. */
static const char nomsg_mark = 0;
#define NOMSG ((void *)&nomsg_mark)

/* The bound try's work, the channel's parts at ud, ud + 1, ud + 2 (stack
 * indices). Pushes what it returns and returns how many. */
static int try_at(lua_State *L, int ud) {
  chan_ref c;
  int r;
  ref_at(L, &c, ud);
  r = cn_chan_recv_try(L, &c);
  if (r >= 0) return r;
  lua_pushlightuserdata(L, NOMSG);
  return 1;
}

static int bound_try_receive(lua_State *L) {
  cn_chan *ch = lua_touserdata(L, UPV(UP_CHAN));
  chan_ref c;
  lua_settop(L, 0);
  if (ch->first <= ch->last) {                 /* (a receiver's own receive's common case) */
    cn_chan_take_oldest(L, UPV(UP_QUEUE), ch);
    if (ch->cap > 0 && (cn_line_len(&ch->line) > 0 || ch->tx_waker)) {
      ref_up(L, &c, ch);
      cn_chan_serve_line(L, &c);
    }
    return 1;
  }
  lua_pushvalue(L, UPV(UP_CHAN));
  lua_pushvalue(L, UPV(UP_QUEUE));
  lua_pushvalue(L, UPV(UP_LINK));
  return try_at(L, 1);
}

/* Pushes fn closed over the loop and the parts of receiver 1, as the
 * receiver's own receive is (a bound function of cosock.op's recv). */
static int bind_receiver(lua_State *L, lua_CFunction fn) {
  lua_settop(L, 1);
  cn_chan_locate(L, 0, "recv");                        /* 2 ud, 3 queue, 4 link */
  lua_pushvalue(L, UPV(UP_LOOP));
  lua_insert(L, 2);
  lua_pushcclosure(L, fn, 4);
  return 1;
}

/* channel_try_fn(rx) -> the bound try of receiver rx (its NOMSG mark is
 * cosock.core.channel_nomsg). */
static int l_try_fn(lua_State *L) { return bind_receiver(L, bound_try_receive); }

/* Where yields are emulated (Lua 5.1, 5.2, LuaJIT: cn_yieldk) a C function
 * that waits is resumed through a Lua wrapper (cn_lift_fields) outside cosock's own
 * Lua code as the watchdog sees it: a message its continuation took could
 * be lost to an interrupt there. So try_first parks a perform's receives and
 * sends a lone send only where lua_yieldk is; elsewhere the perform takes
 * its messages from cosock's own code. */
#ifndef CN_EMULATED_K
#define OP_PARKS 1
#else
#define OP_PARKS 0
#endif


/* channel_unpark(link): wakes the perform parked in the receiver by
 * try_first, if any (it tries again, then waits the way the receiver's
 * other waiters do); a plain receive's ticket is left alone. */
static int l_unpark(lua_State *L) {
  chan_ref c;
  cn_task *t;
  cn_chan_link_ref(L, &c);
  if (c.ch->rx_op && (t = rx_ticket(&c)) != NULL) {
    c.ch->rx_wid = 0;
    cn_deliver(L, c.lp, t, 0);
  }
  return 0;
}

/* The channels of the fast list at fast (stack index), as a userdata of
 * cn_chan pointers (pushed), for try_first's look at each: an empty, open
 * channel with nobody in line has nothing to take, and is passed over
 * without its full try. The operation holds the list, the list the nodes
 * and the nodes their channels: the pointers live as long as the op. */
static void push_chans(lua_State *L, int fast, lua_Integer n) {
  cn_chan **cs = lua_newuserdata(L, (size_t)(n > 0 ? n : 1) * sizeof *cs);
  lua_Integer i;
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, fast, i);
    lua_pushliteral(L, "b");
    if (lua_type(L, -2) != LUA_TTABLE || lua_rawget(L, -2) != LUA_TFUNCTION ||
        lua_tocfunction(L, -1) != bound_try_receive)
      luaL_error(L, "cosock.op: a broken operation (its receive %d has no bound try)", (int)i);
    lua_getupvalue(L, -1, UP_CHAN);
    cs[i - 1] = lua_touserdata(L, -1);
    lua_pop(L, 3);
  }
}

#if OP_PARKS
/* An operation that is one send (its impl: upvalue 7) on a sender without
 * a timeout, at 1 (its fast list, nil, on top): sends as the sender's own
 * send does, waiting in line, and returns true, or nil, "closed". Returns
 * -1 for any other operation. */
static int first_send(lua_State *L) {
  chan_ref c;
  int r;
  lua_pushvalue(L, UPV(6));                    /* "impl" */
  if (lua_rawget(L, 1) != LUA_TTABLE || !lua_rawequal(L, -1, UPV(7))) return -1;
  lua_pushvalue(L, UPV(8));                    /* "a" */
  if (lua_rawget(L, 1) != LUA_TTABLE) return -1;
  lua_pushvalue(L, UPV(9));                    /* "timeout" */
  if (lua_rawget(L, -2) != LUA_TNIL) return -1;
  lua_pushvalue(L, UPV(5));                    /* "b" */
  lua_rawget(L, 1);                            /* 1 op, 2 mt, 3, 4 impl, 5 tx, 6 nil, 7 msg */
  lua_replace(L, 2);
  lua_replace(L, 3);
  lua_replace(L, 1);
  lua_settop(L, 2);                            /* 1 tx, 2 msg */
  cn_chan_locate(L, 1, "send");                        /* 3 ud, 4 queue, 5 link */
  lua_pushnil(L);                              /* 6: no deadline */
  ref_at(L, &c, 3);
  r = cn_chan_send_try(L, &c, 2);
  if (r == 2) {                                /* false, "closed": a perform's nil, "closed" */
    lua_pushnil(L);
    lua_replace(L, -3);
  }
  return r >= 0 ? r : cn_chan_send_wait(L, &c, 1);
}

#endif

/* Tries the receives of the fast list at fast (their channels' pointers in
 * cs) in order, passing over a channel with nothing to take. Returns the
 * number of results pushed (a message, or nil, "closed"), or -1 with the
 * stack as it was. Uses try_first's upvalue "b". */
static int try_each(lua_State *L, int fast, cn_chan *const *cs, lua_Integer n) {
  int top = lua_gettop(L);
  lua_Integer i;
  for (i = 1; i <= n; i++) {
    const cn_chan *ch = cs[i - 1];
    int k;
    if (ch->first > ch->last && !ch->closed && cn_line_len(&ch->line) == 0) continue;
    lua_rawgeti(L, fast, i);                   /* node */
    lua_pushvalue(L, UPV(5));                  /* "b" */
    lua_rawget(L, -2);                         /* its bound try: its channel's parts */
    lua_getupvalue(L, top + 2, UP_CHAN);
    lua_getupvalue(L, top + 2, UP_QUEUE);
    lua_getupvalue(L, top + 2, UP_LINK);
    k = try_at(L, top + 3);
    if (lua_touserdata(L, -1) != NOMSG || k > 1) return k; /* (a message, or nil, "closed") */
    lua_settop(L, top);
  }
  return -1;
}

#if OP_PARKS
static int park_k(lua_State *L, int status, lua_KContext ctx);

/* A perform of receives alone with nothing to take, stack 1 op, 2 mt, 3 fast,
 * 4 chans: while nobody else waits on any of its receivers it parks in
 * each channel at once, one wait holding each receiver's ticket (as a plain
 * receive's, without the receiver's timeout, marked as a perform's:
 * rx_op). The first wake ends the wait and the other tickets with it (a
 * ticket names its wait); another perform that needs a receiver wakes it
 * (channel_unpark). Returns NOMSG, 0 when it cannot park. */
static int park_all(lua_State *L, cn_loop *lp, cn_chan *const *cs, lua_Integer n) {
  chan_ref c;
  lua_Integer i, wid;
  cn_tmo tmo;
  c.lp = lp;
  for (i = 0; i < n; i++) {
    c.ch = cs[i];
    if (rx_waiting(&c)) return -1;
  }
  lua_rawgeti(L, 3, 1);                        /* 5 the first node */
  lua_pushvalue(L, UPV(8));                    /* "a" */
  lua_rawget(L, 5);                            /* 6 its receiver: what the wait shows */
  lua_replace(L, 1);
  lua_settop(L, 4);
  lua_remove(L, 2);                            /* 1 rx, 2 fast, 3 chans */
  tmo.set = 0;
  cn_what_set(lp, CN_WHAT_CHANNEL_RECV);       /* (for a trace: what it waits on) */
  if ((wid = cn_prepark(L, lp, K_RECV, &tmo, 0)) == 0) return -1;
  for (i = 0; i < n; i++) {
    cs[i]->rx_slot = cn_current_slot(lp);
    cs[i]->rx_wid = wid;
    cs[i]->rx_op = 1;
  }
  for (i = 0; i < n; i++) {                    /* a rendezvous has room now */
    if (cs[i]->cap != 0 || !cs[i]->tx_waker) continue;
    lua_rawgeti(L, 2, i + 1);
    lua_pushvalue(L, UPV(5));
    lua_rawget(L, -2);
    lua_getupvalue(L, -1, UP_CHAN);
    c.ch = cs[i];
    c.ud = lua_gettop(L);
    cn_chan_wake_tx_selector(L, &c);
    lua_settop(L, 3);
  }
  lua_pushvalue(L, 1);
  return cn_yieldk(L, 1, (lua_KContext)wid, park_k);
}

/* After the wait: its tickets still on the channels are taken off, the
 * wait ends (cn_wait_end), and the receives are tried again: NOMSG, 4
 * when none has anything. Stack 1 rx, 2 fast, 3 chans. */
static int park_k(lua_State *L, int status, lua_KContext ctx) {
  cn_chan *const *cs;
  lua_Integer i, n;
  int r;
  int timed_out = cn_resumed_timeout(L, -1);
  (void)status;
  luaL_checkstack(L, 12, NULL);
  lua_settop(L, 3);
  cs = lua_touserdata(L, 3);
  n = (lua_Integer)lua_rawlen(L, 2);
  for (i = 0; i < n; i++)
    if (cs[i]->rx_wid == (lua_Integer)ctx) cs[i]->rx_wid = 0;
  cn_wait_end(L, cn_loop_get(L), timed_out);
  r = try_each(L, 2, cs, n);
  if (r >= 0) return r;
  lua_pushlightuserdata(L, NOMSG);
  lua_pushinteger(L, 4);
  return 2;
}
#endif

/* The first tries of a cosock.op perform, in one call (upvalues: loop, the
 * operations' metatable, the keys "fast", "chans", "b", "impl", the sends'
 * impl, the keys "a", "timeout"). For an operation made of receives alone,
 * try_first(op) returns what the first receive that can complete returned
 * (the message, or nil, "closed"); with nothing to take it waits in the
 * channels (park_all, where OP_PARKS). A lone send on a sender without a
 * timeout is sent (first_send, where OP_PARKS). Otherwise it returns NOMSG
 * and why: 0, none could complete (and it did not wait: another waits on
 * one of the receivers, or no direct park here); 1, op is no operation; 2,
 * no task runs; 3, op is not made of receives alone (its fast list is
 * false); 4, it waited and was woken with nothing to take (call it again).
 * The caller raises its own errors. */
static int try_first(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_task *t;
  lua_Integer n;
  int why = 0;
  lua_settop(L, 1);
  if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, UPV(2))) why = 1;
  else if (cn_current_slot(lp) < 0 || (t = cn_task_get(lp, cn_current_slot(lp))) == NULL ||
           t->co == NULL)
    why = 2;                                    /* (as cosock.core.current_task) */
  else {
    lua_pushvalue(L, UPV(3));                   /* "fast" */
    if (lua_rawget(L, 1) != LUA_TTABLE) {       /* 1 op, 2 mt, 3 fast */
#if OP_PARKS
      int r = first_send(L);
      if (r >= 0) return r;
      lua_settop(L, 3);
#endif
      why = 3;
    }
  }
  if (why == 0) {
    cn_chan **cs;
    int r;
    n = (lua_Integer)lua_rawlen(L, 3);
    lua_pushvalue(L, UPV(4));                   /* "chans" */
    if (lua_rawget(L, 1) != LUA_TUSERDATA || lua_rawlen(L, 4) != (size_t)(n > 0 ? n : 1) * sizeof *cs) {
      lua_pop(L, 1);
      push_chans(L, 3, n);
      lua_pushvalue(L, UPV(4));
      lua_pushvalue(L, 4);
      lua_rawset(L, 1);                         /* (may raise: nothing taken yet) */
    }
    cs = lua_touserdata(L, 4);                  /* 4 chans */
    if ((r = try_each(L, 3, cs, n)) >= 0) return r;
#if OP_PARKS
    if (n > 0 && (r = park_all(L, lp, cs, n)) >= 0) return r;
#endif
  }
  lua_pushlightuserdata(L, NOMSG);
  lua_pushinteger(L, why);
  return 2;
}

/* channel_try_first_fn(mt, send_impl) -> try_first for the operations'
 * metatable mt and the sends' impl table. */
static int l_try_first_fn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_pushvalue(L, UPV(UP_LOOP));              /* 3 */
  lua_pushvalue(L, 1);
  lua_pushliteral(L, "fast");
  lua_pushliteral(L, "chans");
  lua_pushliteral(L, "b");
  lua_pushliteral(L, "impl");
  lua_pushvalue(L, 2);
  lua_pushliteral(L, "a");
  lua_pushliteral(L, CN_MSG_TIMEOUT);
  lua_pushcclosure(L, try_first, 9);
  return 1;
}

void cn_channel_op_open(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"channel_try_fn", l_try_fn}, {"channel_try_first_fn", l_try_first_fn},
    {"channel_unpark", l_unpark}, {NULL, NULL}
  };
  luaL_checkstack(L, 2, NULL);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
  lua_pushlightuserdata(L, NOMSG);
  lua_setfield(L, -2, "channel_nomsg");
}
