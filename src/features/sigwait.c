/* sigwait: the waits of cosock.signal that park directly, and their lists.
 *
 * A task in signal.wait parks without the waker protocol (cn_prepark,
 * cn_park_bare in park.c) and its wait is listed here, in C: one entry per
 * task slot (ent[slot]: its wait id and the order it began in), linked into
 * the queue of its signal's name (a userdata in the registry table qs, name
 * -> queue, made when the first wait of that name parks and dropped when its
 * last leaves). A signal (signal_fire) walks its name's queue from the
 * oldest entry, stores its arguments in each waiter's node (the Lua table
 * cosock/signal.lua waits with, nodeof[slot]) and makes the task ready: no
 * Lua code runs per waiter. An entry leaves its queue when a signal passes
 * it, when its task resumes (a timeout, a cancel point), when its task is
 * cancelled (cn_sigwait_cancelled), or when its slot parks again (an entry
 * reset() left behind); a signal skips the entry of a wait that ended
 * otherwise. So a signal costs work for its own waiters only, and waiting
 * costs nothing per pass.
 * Where the loop cannot park the task directly (a coroutine whose yields the
 * task forwards, and every wait on Lua 5.1 and 5.2), the wait yields
 * ({node}, nil, timeout, INTERNAL) and cosock/signal.lua lists the node in a
 * Lua list through node:setwaker. Both lists number their waits from one
 * counter (signal_seq), which keeps the order of wakes across them. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "hooks.h"
#include "messages.h"
#include "park.h"
#include "run.h"
#include "sigwait.h"
#include "task.h"

typedef struct sig_queue {
  int head, tail, n;        /* slots, oldest first (-1: none) */
  lua_Integer id;           /* unique among the queues ever made */
} sig_queue;

typedef struct sig_ent {
  int prev, next;           /* the queue's links (slots) */
  sig_queue *q;             /* listed in q (NULL: not listed) */
  lua_Integer wid;          /* the wait it was listed for */
  lua_Integer seq;          /* when it began (signal_seq's counter) */
  lua_Integer named;        /* the id of the queue whose name its own node has */
  unsigned epoch;           /* the loop's reset epoch when a signal woke it */
  unsigned char woken;      /* a signal woke it and it has not run since */
  unsigned char by_one;     /* ... and that signal was one()'s */
  unsigned char own;        /* nodes[slot] is the slot's own node (signal_wait's) */
} sig_ent;

typedef struct sig_state {
  cn_loop *lp;              /* (the functions' upvalue too: one lookup fewer) */
  sig_ent *ent;             /* cap entries, in the userdata at ents_key */
  int cap;
  lua_Integer seq;          /* the last number given to a wait */
  lua_Integer queues;       /* the last id given to a queue */
  int nq, empty;            /* queues in qs, and how many of them have no entry */
} sig_state;

enum { UP_LOOP = 1, UP_ARGS, UP_BY_ONE, UP_NAME, UP_STATE, UP_QS, UP_NAMES, UP_NODES, UP_ARGSOF,
       UP_COUNT_ };
#define UP(k) lua_upvalueindex(UP_##k)
#define STATE(L) ((sig_state *)lua_touserdata(L, UP(STATE)))

/* Registry keys: the state, its entry array, name -> queue, queue (a light
 * userdata) -> name, slot -> node, slot + 1 -> a signal's arguments (also the functions' upvalues: the hot
 * paths read no registry), cosock/signal.lua's function that passes a
 * signal on when the task it woke is cancelled before it ran, and its
 * nodes' metatable. */
static const char state_key = 0, ents_key = 0, qs_key = 0, names_key = 0, nodes_key = 0,
                  argsof_key = 0, passer_key = 0, mt_key = 0;

/* The state, or NULL before core.open "signal". */
static sig_state *state_of(lua_State *L) {
  sig_state *st;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key);
  st = (sig_state *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return st;
}

/* Makes ent[slot] and argsof[slot + 1] exist (may raise; then ent is as it
 * was). argsof's keys hold false while no signal's arguments wait there:
 * setting one never allocates. */
static void reserve(lua_State *L, sig_state *st, int slot) {
  int cap = st->cap ? st->cap : 16, i;
  sig_ent *e;
  if (slot < st->cap) return;
  while (cap <= slot) {
    if (cap > 0x3fffffff / (int)sizeof *e) luaL_error(L, CN_MSG_NO_MEMORY);
    cap *= 2;
  }
  e = (sig_ent *)lua_newuserdata(L, (size_t)cap * sizeof *e);
  if (st->cap) memcpy(e, st->ent, (size_t)st->cap * sizeof *e);
  memset(e + st->cap, 0, (size_t)(cap - st->cap) * sizeof *e);
  for (i = st->cap; i < cap; i++) {
    lua_pushboolean(L, 0);
    lua_rawseti(L, UP(ARGSOF), i + 1);
  }
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ents_key); /* (an existing key: no allocation) */
  st->ent = e;
  st->cap = cap;
}

/* Pushes the table at key. */
static void push_table(lua_State *L, const char *key) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, key);
}

/* Takes ent[slot] out of its queue. No allocation. */
static void unlink_ent(sig_state *st, int slot) {
  sig_ent *e = &st->ent[slot];
  sig_queue *q = e->q;
  if (q == NULL) return;
  if (e->prev >= 0) st->ent[e->prev].next = e->next; else q->head = e->next;
  if (e->next >= 0) st->ent[e->next].prev = e->prev; else q->tail = e->prev;
  e->q = NULL;
  e->prev = e->next = -1;
  if (--q->n == 0) st->empty++;
}

/* Drops the queues without entries from qs and names. No allocation. */
static void drop_empty(lua_State *L, sig_state *st) {
  lua_pushnil(L);
  while (lua_next(L, UP(QS))) {                /* name, queue */
    sig_queue *q = (sig_queue *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (q == NULL || q->n > 0) continue;
    lua_pushnil(L);
    lua_rawsetp(L, UP(NAMES), q);
    lua_pushvalue(L, -1);
    lua_pushnil(L);
    lua_rawset(L, UP(QS));                     /* (an existing key: allowed while traversing) */
    st->nq--;
    st->empty--;
  }
}

/* Pushes the queue of the name at idx and returns it, made when missing
 * (may raise; nothing listed then). A queue stays when its last entry
 * leaves (a name waited on again and again keeps its queue, and its waiters'
 * nodes their name); the empty ones go once they outnumber the others. */
static sig_queue *push_queue(lua_State *L, sig_state *st, int name) {
  sig_queue *q;
  lua_pushvalue(L, name);
  lua_rawget(L, UP(QS));
  q = (sig_queue *)lua_touserdata(L, -1);
  if (q == NULL) {
    lua_pop(L, 1);
    if (st->empty > 64 && st->empty * 2 > st->nq) drop_empty(L, st);
    q = (sig_queue *)lua_newuserdata(L, sizeof *q);
    q->head = q->tail = -1;
    q->n = 0;
    q->id = ++st->queues;
    lua_pushvalue(L, name);
    lua_rawsetp(L, UP(NAMES), q);              /* names[q] = name first: */
    lua_pushvalue(L, name);                    /* a queue in qs always has its name */
    lua_pushvalue(L, -2);
    lua_rawset(L, UP(QS));
    st->nq++;
    st->empty++;
  }
  return q;
}

/* Lists ent[slot] in q for the wait wid, in the order of seq. No
 * allocation. */
static void list_ent(sig_state *st, sig_queue *q, int slot, lua_Integer wid, lua_Integer seq) {
  sig_ent *e = &st->ent[slot];
  int p = q->tail;
  while (p >= 0 && st->ent[p].seq > seq) p = st->ent[p].prev;
  e->q = q;
  e->wid = wid;
  e->seq = seq;
  e->woken = 0;
  e->prev = p;
  e->next = p >= 0 ? st->ent[p].next : q->head;
  if (p >= 0) st->ent[p].next = slot; else q->head = slot;
  if (e->next >= 0) st->ent[e->next].prev = slot; else q->tail = slot;
  if (q->n++ == 0) st->empty--;
}

/* The wait of slot is over: out of its queue, and not woken any more. */
static void wait_over(sig_state *st, int slot) {
  if (slot < 0 || slot >= st->cap) return;
  st->ent[slot].woken = st->ent[slot].by_one = 0;
  unlink_ent(st, slot);
}

/* cn_prepark for a wait that only a signal or the timeout (has_timeout:
 * timeout seconds) ends. */
static lua_Integer prepark(lua_State *L, cn_loop *lp, int has_timeout, double timeout) {
  cn_tmo tmo;
  tmo.set = (unsigned char)has_timeout;
  tmo.is_int = 0;
  tmo.ival = 0;
  tmo.secs = timeout;
  cn_what_set(lp, CN_WHAT_SIGNAL);             /* (for a trace: what it waits on) */
  return cn_prepark(L, lp, K_RECV, &tmo, 0);
}

/* After signal_wait's wait: the signal's arguments (the packed table), nil
 * after the timeout, or false for a wake without either (cosock/signal.lua
 * then waits again through a node). */
static int wait_k(lua_State *L, int status, lua_KContext ctx) {
  sig_state *st = STATE(L);
  cn_loop *lp = st->lp;
  int slot = cn_current_slot(lp), timed_out = cn_resumed_timeout(L, -1);
  int woken = slot >= 0 && slot < st->cap && st->ent[slot].woken;
  (void)status;
  (void)ctx;
  wait_over(st, slot);
  if (woken) {
    lua_rawgeti(L, UP(ARGSOF), slot + 1);      /* the signal's arguments */
    lua_pushboolean(L, 0);                     /* (not kept alive) */
    lua_rawseti(L, UP(ARGSOF), slot + 1);
    if (lua_istable(L, -1)) return 1;
  }
  if (cn_wait_end(L, lp, timed_out)) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushboolean(L, 0);
  return 1;
}

/* signal_wait(nil, name, timeout) -> the signal's arguments (the packed
 * table), or nil after the timeout (nil: none); false, at once, where the
 * task cannot park directly (then cosock/signal.lua waits through a node).
 * The task waits with its slot's own node (nodes[slot], made on its first
 * wait), put in the place of the first argument: metadata.c finds what a
 * task waits on there, and the deadlock report names the signal from it. */
static int s_wait(lua_State *L) {
  CN_RESUMABLE(L);
  sig_state *st = STATE(L);
  cn_loop *lp = st->lp;
  sig_queue *q;
  sig_ent *e;
  cn_task *t = cn_own_task(lp, L);
  int slot, has_timeout;
  double timeout = 0;
  lua_Integer wid;
  lua_settop(L, 3);
  /* (cn_prepark's own conditions, first: where it cannot park the task
   * directly, nothing is made for a wait that goes through a node) */
  if (!CN_KNOWS_YIELDABLE || t == NULL || !cn_isyieldable(L)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  slot = t->slot;
  has_timeout = !lua_isnil(L, 3);
  if (has_timeout) timeout = luaL_checknumber(L, 3);
  /* What may raise first: from cn_prepark to the yield nothing may raise.
   * (At most 6 values on the stack: within a C function's 20.) */
  reserve(L, st, slot);
  q = push_queue(L, st, 2);                    /* 4: keeps it while parking */
  e = &st->ent[slot];
  if (!e->own || lua_rawgeti(L, UP(NODES), slot) != LUA_TTABLE) {
    if (e->own) lua_pop(L, 1);
    lua_createtable(L, 0, 4);                  /* 5: every field, so that setting one never allocates */
    lua_pushvalue(L, UP(NAME));
    lua_pushvalue(L, 2);
    lua_rawset(L, 5);
    lua_pushvalue(L, UP(ARGS));
    lua_pushboolean(L, 0);
    lua_rawset(L, 5);
    lua_pushvalue(L, UP(BY_ONE));
    lua_pushboolean(L, 0);
    lua_rawset(L, 5);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
    lua_setmetatable(L, 5);
    lua_pushvalue(L, 5);
    lua_rawseti(L, UP(NODES), slot);
    e = &st->ent[slot];
    e->own = 1;
    e->named = q->id;
  } else if (e->named != q->id) {              /* (the same queue: the same name) */
    lua_pushvalue(L, UP(NAME));
    lua_pushvalue(L, 2);
    lua_rawset(L, 5);
    e->named = q->id;
  }
  if (e->woken) {                              /* (a wake that reset() cut short) */
    e->woken = e->by_one = 0;
    lua_pushboolean(L, 0);
    lua_rawseti(L, UP(ARGSOF), slot + 1);
  }
  lua_replace(L, 1);                           /* node, name, timeout, q */
  unlink_ent(st, slot);                        /* (one reset() left) */
  wid = prepark(L, lp, has_timeout, timeout);
  if (wid == 0) {
    lua_pushboolean(L, 0);
    return 1;
  }
  list_ent(st, q, slot, wid, ++st->seq);
  lua_pushvalue(L, 1);
  return cn_yieldk(L, 1, 0, wait_k);
}

/* After the wait: what the loop resumed the task with (nil, nil, "timeout"
 * for a timeout). Its entry leaves its queue: the wait is over. */
static int park_k(lua_State *L, int status, lua_KContext ctx) {
  cn_loop *lp = cn_loop_get(L);
  (void)status;
  (void)ctx;
  wait_over(STATE(L), cn_current_slot(lp));
  cn_wait_end(L, lp, cn_resumed_timeout(L, -1));
  return lua_gettop(L) - 3;
}

/* signal_park(node, name, timeout [, seq]) -> the loop's three resume
 * values. Parks the calling task until a signal of name reaches it or the
 * timeout (nil: none). seq: the place of a wait that began before (an
 * on() waiter's, listed when it was made); else it goes last. */
static int s_park(lua_State *L) {
  CN_RESUMABLE(L);
  sig_state *st = STATE(L);
  cn_loop *lp = st->lp;
  sig_queue *q = NULL;
  int has_timeout, has_seq, slot = cn_current_slot(lp);
  lua_Integer seq = 0;
  double timeout = 0;
  lua_Integer wid;
  luaL_checktype(L, 1, LUA_TTABLE);
  has_seq = !lua_isnoneornil(L, 4);
  if (has_seq) seq = luaL_checkinteger(L, 4);
  lua_settop(L, 3);
  has_timeout = !lua_isnil(L, 3);
  if (has_timeout) timeout = luaL_checknumber(L, 3);
  /* What may raise first: from cn_prepark to the yield nothing may raise,
   * or the loop would take a later yield for this one. (Only where
   * cn_prepark can park the task directly: elsewhere the node is listed in
   * Lua, by its setwaker.) */
  if (CN_KNOWS_YIELDABLE && cn_own_task(lp, L) != NULL && cn_isyieldable(L)) {
    reserve(L, st, slot);
    lua_pushvalue(L, 1);
    lua_rawseti(L, UP(NODES), slot);
    st->ent[slot].own = 0;
    q = push_queue(L, st, 2);                  /* 4: keeps it while parking */
    unlink_ent(st, slot);                      /* (one reset() left) */
  }
  wid = prepark(L, lp, has_timeout, timeout);
  if (wid != 0 && q != NULL) {
    list_ent(st, q, slot, wid, has_seq ? seq : ++st->seq);
    lua_settop(L, 3);
    lua_pushvalue(L, 1);
    return cn_yieldk(L, 1, 0, park_k);
  }
  lua_settop(L, 3);
  lua_createtable(L, 1, 0);                    /* recvt */
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  lua_pushnil(L);
  lua_pushvalue(L, 3);
  lua_pushlightuserdata(L, CN_INTERNAL);
  return cn_yieldk(L, 4, 0, park_k);
}

/* signal_fire(name, args, before, limit, one) -> how many it woke: wakes
 * the parked waiters of name, oldest first, that began before the wait
 * numbered before (nil: any) and not after limit (nil: any), each with
 * node.args = args (and node.by_one = true when one); the first only when
 * one. Entries of waits that ended otherwise leave without a wake. Each
 * leaves its queue before its wake: should a wake raise (memory), the rest
 * stay listed. */
static int s_fire(lua_State *L) {
  sig_state *st = STATE(L);
  cn_loop *lp = st->lp;
  int has_before = !lua_isnoneornil(L, 3), has_limit = !lua_isnoneornil(L, 4);
  int one = lua_toboolean(L, 5), slot;
  lua_Integer before = has_before ? luaL_checkinteger(L, 3) : 0;
  lua_Integer limit = has_limit ? luaL_checkinteger(L, 4) : 0;
  lua_Integer n = 0;
  unsigned char was;
  sig_queue *q;
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_rawget(L, UP(QS));                       /* 3: the queue, kept while it runs */
  q = (sig_queue *)lua_touserdata(L, 3);
  while (q != NULL && (slot = q->head) >= 0) {
    sig_ent *e = &st->ent[slot];
    cn_task *t;
    if ((has_limit && e->seq > limit) || (has_before && e->seq >= before)) break;
    t = cn_task_get(lp, slot);
    if (t != NULL && (t->waitid != e->wid || !t->bare || t->state != T_PARKED || t->timed_out))
      t = NULL;
    unlink_ent(st, slot);
    if (t == NULL) continue;
    /* (keys that exist: no allocation) */
    if (e->own) {                              /* signal_wait's: its arguments in argsof */
      lua_pushvalue(L, 2);
      lua_rawseti(L, UP(ARGSOF), slot + 1);
    } else if (lua_rawgeti(L, UP(NODES), slot) == LUA_TTABLE) { /* signal_park's: in its node */
      lua_pushvalue(L, UP(ARGS));
      lua_pushvalue(L, 2);
      lua_rawset(L, -3);
      lua_pop(L, 1);
    } else {
      lua_pop(L, 1);
    }
    e = &st->ent[slot];
    e->woken = 1;
    e->by_one = (unsigned char)one;
    e->epoch = cn_tasks_epoch(lp);
    n++;
    was = cn_cause_set(lp, CN_CAUSE_SIGNAL);   /* (a trace's wake cause) */
    cn_deliver(L, lp, t, 0);                   /* (cannot raise) */
    cn_cause_set(lp, was);
    if (one) break;
  }
  lua_pushinteger(L, n);
  return 1;
}

/* signal_queued(name) -> whether waits of name are parked here (some may
 * have ended: signal_fire skips them). */
static int s_queued(lua_State *L) {
  sig_queue *q;
  lua_settop(L, 1);
  lua_rawget(L, UP(QS));
  q = (sig_queue *)lua_touserdata(L, 1);
  lua_pushboolean(L, q != NULL && q->n > 0);
  return 1;
}

/* signal_seq() -> a number greater than every wait's so far and smaller
 * than every later one's: cosock/signal.lua numbers its nodes with it, and
 * bounds signal.all by it. */
static int s_seq(lua_State *L) {
  sig_state *st = STATE(L);
  lua_pushinteger(L, ++st->seq);
  return 1;
}

int cn_sigwait_cancelled(lua_State *L, int slot) {
  int top = lua_gettop(L), status = LUA_OK, pass;
  sig_state *st = state_of(L);
  sig_ent *e;
  if (st == NULL || slot < 0 || slot >= st->cap) return LUA_OK;
  luaL_checkstack(L, 6, NULL);
  push_table(L, &nodes_key);                   /* top + 1 */
  push_table(L, &argsof_key);                  /* top + 2 */
  unlink_ent(st, slot);
  e = &st->ent[slot];
  /* (all()'s signal reached the others; a wake from before a reset() is
   * forgotten with its task) */
  pass = e->woken && e->by_one && e->epoch == cn_tasks_epoch(st->lp);
  e->woken = e->by_one = 0;
  if (lua_rawgeti(L, top + 1, slot) != LUA_TTABLE) pass = 0; /* top + 3: the node */
  if (e->own) {                                /* its arguments: in argsof (not kept alive) */
    lua_rawgeti(L, top + 2, slot + 1);
    lua_pushboolean(L, 0);
    lua_rawseti(L, top + 2, slot + 1);
    if (pass) {
      lua_pushliteral(L, "args");              /* node.args = them (a field it has) */
      lua_insert(L, -2);
      lua_rawset(L, top + 3);
    }
  }
  lua_settop(L, top + 3);
  if (pass) {
    lua_pushliteral(L, "by_one");              /* node.by_one = true (a field it has) */
    lua_pushboolean(L, 1);
    lua_rawset(L, top + 3);
  }
  if (pass && lua_rawgetp(L, LUA_REGISTRYINDEX, &passer_key) == LUA_TFUNCTION) {
    lua_pushvalue(L, top + 3);                 /* passer, node */
    status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) {
      lua_replace(L, top + 1);
      lua_settop(L, top + 1);                  /* the error */
      return status;
    }
  }
  lua_settop(L, top);
  return status;
}

/* signal_passer(fn, mt): cosock/signal.lua's fn(node), called when a task
 * that a signal woke is cancelled before it ran, and the metatable of its
 * nodes (signal_wait's get it too). */
static int s_passer(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &mt_key);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &passer_key);
  return 0;
}

void cn_sigwait_open(lua_State *L) {
  static const char *const waits[] = {"signal_park", "signal_wait", NULL};
  static const luaL_Reg funcs[] = {
    {"signal_park", s_park},
    {"signal_wait", s_wait},
    {"signal_fire", s_fire},
    {"signal_seq", s_seq},
    {"signal_queued", s_queued},
    {"signal_passer", s_passer},
    {NULL, NULL}
  };
  static const char *const keys[] = {&qs_key, &names_key, &nodes_key, &argsof_key, NULL};
  sig_state *st;
  int i;
  luaL_checkstack(L, UP_COUNT_ + 1, NULL);
  lua_pushboolean(L, 0);                       /* (the array's key, taken now) */
  lua_rawsetp(L, LUA_REGISTRYINDEX, &ents_key);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  lua_pushliteral(L, "args");
  lua_pushliteral(L, "by_one");
  lua_pushliteral(L, "name");
  st = (sig_state *)lua_newuserdata(L, sizeof *st);
  memset(st, 0, sizeof *st);
  st->lp = (cn_loop *)lua_touserdata(L, -5);   /* (the loop, pushed above) */
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
  for (i = 0; keys[i] != NULL; i++) {
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, keys[i]);
  }
  luaL_setfuncs(L, funcs, UP_COUNT_ - 1);
  cn_lift_fields(L, -1, waits);
}
