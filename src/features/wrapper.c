/* wrapper: the hot methods of the project's socket wrappers (cosock.socket.wrap),
 * receive and send, and the wait between two tries of a call, in C.
 *
 * A wrapper is a table { inner_sock = <non-blocking LuaSocket/LuaSec object>,
 * timeout = n|nil, total = n|nil, _wouldblock, ... } (the fields are listed in
 * wrap.lua; they are read raw, never through the method table). A call tries the inner object; when that
 * fails with "timeout"/"wantread"/"wantwrite", it waits and tries again when
 * resumed, from a continuation (lua_yieldk). In the coroutine the loop is
 * resuming, the loop parks the task on the wrapper directly (cn_prepark) and
 * the wrapper yields only itself; anywhere else it yields ({self}, nil, t,
 * INTERNAL) or (nil, {self}, t, INTERNAL), which a task may forward to the
 * loop. Written in Lua this was most of the instructions a round trip spent
 * outside LuaSocket.
 *
 * Timeouts are LuaSocket's: timeout ("b") limits each wait, total ("t") the
 * whole call; nil means no limit, 0 fails at once with the inner object's
 * own values, and so does a negative one (cosock's quirk; LuaSocket reads it
 * as no limit). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "fidelity.h"
#include "lib/clock.h"
#include "luasocket_tcp.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "waiters.h"
#include "wrapper.h"

/* Upvalue 1 is the loop (LOOP_UPVALUE). Then the field and method names the
 * functions read: pushing an upvalue costs a fraction of interning a C
 * string again (lua_pushstring). */
#define KEYS(X) \
  X(INNER_SOCK, "inner_sock") \
  X(WOULDBLOCK, "_wouldblock") X(TOTAL, "total") \
  X(RECVT, "_recvt") X(SENDT, "_sendt") X(CLOSED, "_closed") \
  X(RECEIVE, "receive") X(SEND, "send") \
  X(TIMEOUT, "timeout") X(WANTREAD, "wantread") X(WANTWRITE, "wantwrite") \
  X(CLOSEDERR, "closed") X(TLSEOF, "unexpected eof while reading") X(LINE, "*l") \
  X(EMPTY, "")
#define KEY_ENUM(name, str) UP_##name,
enum { UP_LOOP = 1, KEYS(KEY_ENUM) UP_COUNT_ };
#define KEY(k) lua_upvalueindex(UP_##k)

/* Which wait a failed call asks for, by the inner object's error: LuaSocket
 * says "timeout"; LuaSec "wantread"/"wantwrite" (a TLS receive may need the
 * socket writable during a renegotiation, and the other way round). -1: the
 * error is final. */
static int wait_kind(lua_State *L, int err, int own) {
  if (lua_rawequal(L, err, KEY(TIMEOUT))) return own;
  if (lua_rawequal(L, err, KEY(WANTREAD))) return K_RECV;
  if (lua_rawequal(L, err, KEY(WANTWRITE))) return K_SEND;
  return -1;
}

/* Pushes self[key] without metamethods (the wrapper's fields are raw). */
static int rawfield(lua_State *L, int self, int key) {
  lua_pushvalue(L, key);
  return lua_rawget(L, self);
}

/* The wrapper's timeouts, read raw: a number sets one (a negative one counts
 * as 0), anything else (nil, NaN) means none. "timeout" is KEY(TIMEOUT), the same string as
 * the error. */
typedef struct timeouts {
  lua_Number block, total;
  int has_block, has_total;
  cn_tmo given;                                /* the block timeout as it was set */
} timeouts;

static lua_Number timeout_field(lua_State *L, int self, int key, int *set, cn_tmo *given) {
  lua_Number v = 0;
  *set = 0;
  if (rawfield(L, self, key) == LUA_TNUMBER) {
    if (given) *given = cn_tmo_of(L, -1);
    v = lua_tonumber(L, -1);
    if (v < 0) v = 0;                          /* cosock: a negative timeout expires at once */
    *set = v >= 0;
  }
  lua_pop(L, 1);
  return v;
}

static void read_timeouts(lua_State *L, int self, timeouts *tm) {
  tm->given.set = 0;
  tm->block = timeout_field(L, self, KEY(TIMEOUT), &tm->has_block, &tm->given);
  tm->total = timeout_field(L, self, KEY(TOTAL), &tm->has_total, NULL);
}

/* False when a timeout of 0 makes every call fail at once instead of waiting. */
static int may_wait(const timeouts *tm) {
  return !(tm->has_block && tm->block == 0) && !(tm->has_total && tm->total == 0);
}

/* The deadline of a call whose zero timeout yields once (see wait_begin): no
 * real deadline is negative infinity. */
#define ZERO_WAIT (-HUGE_VAL)

/* Starts a wait of the wrapper at self for kind. dl is the stack slot of the
 * call's deadline: nil before its first wait, then kept there across waits.
 * known: the wrapper's timeouts when the caller has just read them, else NULL.
 * Returns 0 when the call must fail with a timeout now; otherwise pushes the
 * values to yield and returns their count. */
static int wait_begin(lua_State *L, cn_loop *lp, int self, int kind, int dl, const timeouts *known) {
  timeouts tm;
  cn_tmo tmo;
  lua_Number deadline, left, now = -1;
  /* (Up to the park this pushes one value at a time, within the 20 slots a
   * C function starts with: the stack is checked for the tuple below.) */
  if (known) tm = *known;
  else read_timeouts(L, self, &tm);
  /* The wait's timeout: the block timeout as it was set (so metadata and a
   * forwarded yield show the wrapper's own number), unless the call's total
   * deadline comes first. */
  tmo = tm.given;
  tmo.set = (unsigned char)tm.has_block;
  tmo.secs = tm.block;
  if (!may_wait(&tm)) {
    /* A zero (or negative) timeout: cosock's wrapper still yields once, and
     * the loop times it out on the next pass, so other tasks run first (a
     * task polling with settimeout(0) does not starve them). LuaSocket's
     * meaning, fail now, is set_luasocket_timeouts(true). */
    if (cn_luasocket_timeouts(lp)) return 0;
    if (!tm.has_block || tm.block != 0) tmo.is_int = 0;
    tmo.set = 1;
    tmo.secs = 0;
    /* The call fails after this wait, however it ends (cosock's gets the
     * timeout even when the socket became ready in the same pass). */
    lua_pushnumber(L, ZERO_WAIT);
    lua_replace(L, dl);
  } else {
    if (lua_isnil(L, dl)) {                    /* the call's first wait */
      lua_pushnumber(L, tm.has_total ? (now = cn_clock_now()) + tm.total : HUGE_VAL);
      lua_replace(L, dl);
    }
    deadline = lua_tonumber(L, dl);
    if (deadline != HUGE_VAL) {
      left = deadline - (now < 0 ? cn_clock_now() : now);
      if (left <= 0) return 0;
      if (!tmo.set || left < tmo.secs) tmo.secs = left, tmo.set = 1, tmo.is_int = 0;
    }
  }
  /* The usual case: the loop parks the task on self without a yield tuple
   * (only for the project's wrappers: anything else gets the protocol). */
  if (cn_is_native(L, lp, self) && cn_prepark(L, lp, kind, &tmo, self)) {
    lua_pushvalue(L, self);
    return 1;
  }
  /* Yielding to another coroutine: what cosock's wrappers yield,
   * ({self}, {}, timeout) or ({}, {self}, timeout); {self} is made once per
   * wrapper and kind. */
  luaL_checkstack(L, 6, NULL);
  if (rawfield(L, self, kind == K_RECV ? KEY(RECVT) : KEY(SENDT)) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, self);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, kind == K_RECV ? KEY(RECVT) : KEY(SENDT));
    lua_pushvalue(L, -2);
    lua_rawset(L, self);
  }
  lua_newtable(L);
  if (kind == K_SEND) lua_insert(L, -2);
  if (!tmo.set) lua_pushnil(L);
  else if (tmo.is_int) lua_pushinteger(L, tmo.ival);
  else lua_pushnumber(L, tmo.secs);
  return 3;
}

/* After a wait: true when the loop ended it with a timeout (its values are
 * on top of the stack, the third is the error), or it was a zero timeout's
 * one yield (the deadline at base is ZERO_WAIT). */
static int wait_timed_out(lua_State *L, int base) {
  int timed_out = lua_tonumber(L, base) == ZERO_WAIT  /* (nil reads 0) */
                  || (lua_gettop(L) >= base + 3 && lua_type(L, base + 3) == LUA_TSTRING &&
                      lua_rawequal(L, base + 3, KEY(TIMEOUT)));
  return cn_wait_end(L, cn_loop_get(L), timed_out);
}

/* Pushes inner's method name and inner, ready for the arguments and lua_call. */
static void push_method(lua_State *L, int inner, int name) {
  lua_pushvalue(L, name);
  lua_gettable(L, inner);
  lua_pushvalue(L, inner);
}

static int check_inner(lua_State *L, int self, const char *what) {
  int type = rawfield(L, self, KEY(INNER_SOCK));
  if (type != LUA_TUSERDATA && type != LUA_TTABLE)
    return luaL_error(L, "cosock: %s on a socket wrapper without an inner socket", what);
  return lua_gettop(L);
}

/* ---- receive ----------------------------------------------------------------
 * Stack while it runs: 1 self, 2 pattern, 3 partial (the prefix at first),
 * 4 inner, 5 err, 6 deadline. */
enum { RV_SELF = 1, RV_PATTERN, RV_PARTIAL, RV_INNER, RV_ERR, RV_DEADLINE };

static int receive_k(lua_State *L, int status, lua_KContext ctx);

/* Does the pattern read until the peer closes ("*a")? */
static int reads_all(lua_State *L) {
  const char *p;
  if (lua_type(L, RV_PATTERN) != LUA_TSTRING) return 0;
  p = lua_tostring(L, RV_PATTERN);
  return p[0] == '*' && p[1] == 'a';
}

/* Gives up: nil, err, partial (the inner object's own failure values). The
 * partial data is the prefix, or "" as LuaSocket and LuaSec give it, when no
 * try of the inner receive gave any (a wait first, or a would-block read
 * here). */
static int receive_fail(lua_State *L) {
  lua_settop(L, RV_DEADLINE);
  lua_pushnil(L);
  lua_pushvalue(L, RV_ERR);
  lua_pushvalue(L, lua_isnil(L, RV_PARTIAL) ? KEY(EMPTY) : RV_PARTIAL);
  return 3;
}

/* True once close() ran on the wrapper at self (its _closed field). */
static int is_closed(lua_State *L, int self) {
  int closed = rawfield(L, self, KEY(CLOSED)) != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return closed;
}

/* The wait kind of an error not yet looked at (wait_kind decides). */
#define KIND_OF_ERR (-2)

/* The inner receive failed with err: wait and try again, or give up. tcp:
 * the inner is a LuaSocket TCP object (cn_ls_tcp), kept for the retry.
 * kind: K_RECV when err is known to be LuaSocket's "timeout", else
 * KIND_OF_ERR. */
static int receive_wait(lua_State *L, const timeouts *known, const char *tcp, int kind) {
  int n;
  if (kind == KIND_OF_ERR) kind = wait_kind(L, RV_ERR, K_RECV);
  if (kind >= 0) {
    if ((n = wait_begin(L, cn_loop_get(L), RV_SELF, kind, RV_DEADLINE, known)) > 0)
      return cn_yieldk(L, n, tcp != NULL, receive_k);
    return receive_fail(L);
  }
  /* OpenSSL 3 reports a peer whose TCP stream ended without a TLS
   * close_notify this way; for a reader it is the peer closing. */
  if (lua_rawequal(L, RV_ERR, KEY(TLSEOF))) {
    lua_pushvalue(L, KEY(CLOSEDERR));
    lua_replace(L, RV_ERR);
  }
  if (lua_rawequal(L, RV_ERR, KEY(CLOSEDERR)) && reads_all(L)) {
    /* "*a": the peer closing ends the data; what came is the result. Also
     * after the wrapper's own close, as cosock 0.2.0 answers (LuaSocket
     * says nil, "closed"), unless that close may wake a waiting "*a"
     * (set_close_wakes): the data so far is then not all of it, and the
     * error says so (doc/behaviour.md). */
    if (!cn_close_wakes(cn_loop_get(L)) || !is_closed(L, RV_SELF)) {
      lua_pushvalue(L, lua_isnil(L, RV_PARTIAL) ? KEY(EMPTY) : RV_PARTIAL);
      return 1;
    }
  }
  return receive_fail(L);
}

/* Pushes prefix .. s[0..len) without its '\r's (what LuaSocket's "*l" keeps). */
static void push_line(lua_State *L, const char *s, size_t len) {
  luaL_Buffer b;
  size_t i, plen = lua_rawlen(L, RV_PARTIAL);  /* (nil: 0) */
  if (plen == 0 && memchr(s, '\r', len) == NULL) {
    lua_pushlstring(L, s, len);
    return;
  }
  luaL_buffinit(L, &b);
  if (plen > 0) {
    lua_pushvalue(L, RV_PARTIAL);
    luaL_addvalue(&b);
  }
  for (i = 0; i < len; i++)
    if (s[i] != '\r') luaL_addchar(&b, s[i]);
  luaL_pushresult(&b);
}

/* A line receive on a LuaSocket TCP object, done here in LuaSocket's own
 * buffer as its receive("*l") does it (luasocket_tcp.c). Returns 1 with the
 * line pushed; 0 when the socket has nothing, 2 when the peer closed with
 * nothing buffered (err stored as LuaSocket's error: "timeout", "closed";
 * its partial result is the prefix, as at RV_PARTIAL); -1 when LuaSocket's
 * receive must run (another pattern, a partial line, an error). */
static int receive_direct(lua_State *L, char *tcp) {
  const char *line;
  size_t len;
  int got;
  if (!lua_isnil(L, RV_PATTERN)) return -1;
  got = cn_ls_peek_line(tcp, &line, &len);
  if (got == 0 || got == -2) {
    /* LuaSocket's would-block error, or its error for the peer closing
     * (which the retry below then gives up on): no second recv() to learn it. */
    lua_pushvalue(L, got == 0 ? KEY(TIMEOUT) : KEY(CLOSEDERR));
    lua_replace(L, RV_ERR);
    got = got == 0 ? 0 : 2;
  } else if (got > 0) {
    push_line(L, line, len);                   /* may raise: the line stays buffered */
    cn_ls_take(tcp, len + 1);                  /* the '\n' is taken too */
  }
  return got;
}

/* One try of the inner receive with what the stack holds (tcp as for
 * receive_wait). */
static int receive_try(lua_State *L, char *tcp) {
  lua_settop(L, RV_DEADLINE);
  switch (tcp ? receive_direct(L, tcp) : -1) {
  case 1: return 1;
  case 0: return receive_wait(L, NULL, tcp, K_RECV);
  case 2: return receive_wait(L, NULL, tcp, KIND_OF_ERR);
  }
  push_method(L, RV_INNER, KEY(RECEIVE));
  lua_pushvalue(L, RV_PATTERN);
  lua_pushvalue(L, RV_PARTIAL);
  lua_call(L, 3, 3);                           /* data, err, partial */
  if (!lua_isnil(L, -3)) {
    lua_settop(L, RV_DEADLINE + 1);
    return 1;
  }
  lua_copy(L, -2, RV_ERR);
  lua_copy(L, -1, RV_PARTIAL);
  lua_settop(L, RV_DEADLINE);
  return receive_wait(L, NULL, tcp, KIND_OF_ERR);
}

/* ctx: whether the inner was proven a LuaSocket TCP object before the wait
 * (it still is: it stayed on this stack, and such an object stays one). */
static int receive_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  if (wait_timed_out(L, RV_DEADLINE)) return receive_fail(L);
  return receive_try(L, ctx ? lua_touserdata(L, RV_INNER) : NULL);
}

/* LuaSocket (3.1, and LuaSec's copy of its buffer) checks these before it
 * reads anything: a count >= 0, or a string starting "*l" or "*a" (nil is
 * "*l"), and a string prefix. Checking them here first gives the messages it
 * gave when the wrapper was Lua, naming this method. */
static void check_receive_args(lua_State *L) {
  int type = lua_type(L, RV_PARTIAL);
  if (type != LUA_TNIL && type != LUA_TSTRING) luaL_optlstring(L, RV_PARTIAL, NULL, NULL);
  if (lua_rawequal(L, RV_PATTERN, KEY(LINE))) {
    /* LuaSocket tests a string pattern with lua_isnumber, which runs strtod
     * on it; "*l" is its default, so pass nil for it (same result). */
    lua_pushnil(L);
    lua_replace(L, RV_PATTERN);
    return;
  }
  type = lua_type(L, RV_PATTERN);
  if (type == LUA_TNUMBER ||
      (type == LUA_TSTRING && lua_tostring(L, RV_PATTERN)[0] != '*' && lua_isnumber(L, RV_PATTERN))) {
    luaL_argcheck(L, lua_tonumber(L, RV_PATTERN) >= 0, RV_PATTERN, "invalid receive pattern");
  } else {
    const char *p = luaL_optstring(L, RV_PATTERN, "*l");
    luaL_argcheck(L, p[0] == '*' && (p[1] == 'l' || p[1] == 'a'), RV_PATTERN,
                  "invalid receive pattern");
  }
}

/* receive(pattern, prefix): LuaSocket's receive ("*l" default, "*a", byte
 * count) that waits instead of failing with "timeout"/"wantread". */
static int w_receive(lua_State *L) {
  cn_loop *lp;
  cn_task *t;
  char *tcp;
  CN_RESUMABLE(L);
  lp = cn_loop_get(L);
  luaL_checktype(L, RV_SELF, LUA_TTABLE);
  lua_settop(L, RV_PARTIAL);
  check_receive_args(L);
  check_inner(L, RV_SELF, "receive");          /* at RV_INNER */
  lua_pushnil(L);                              /* err */
  lua_pushnil(L);                              /* deadline */
  tcp = cn_ls_tcp(L, lp, RV_INNER);
  if ((t = cn_own_task(lp, L)) != NULL && t->sent_by == lua_topointer(L, RV_SELF)) {
    int wait_first;
    timeouts tm;
    t->sent_by = NULL;
    /* Right after a send the answer has almost never arrived: a first try
     * would be a recv() that fails. When the call may wait and nothing is
     * buffered, wait first (data already there ends the wait at once), as
     * if the first try had failed with the inner object's would-block error.
     * (Not on a closed wrapper: its socket is never ready; the try says so.) */
    read_timeouts(L, RV_SELF, &tm);
    if ((wait_first = may_wait(&tm) && !is_closed(L, RV_SELF)) != 0 && tcp != NULL) {
      wait_first = !cn_ls_buffered(tcp);       /* LuaSocket's buffer, read */
    } else if (wait_first) {
      wait_first = !cn_dirty(L, RV_INNER);
    }
    if (wait_first) {
      /* The inner's would-block error: LuaSocket's unless the wrapper names
       * its own (tls: "wantread"). */
      int kind = KIND_OF_ERR;
      if (tcp != NULL || rawfield(L, RV_SELF, KEY(WOULDBLOCK)) != LUA_TSTRING) {
        lua_settop(L, RV_DEADLINE);
        lua_pushvalue(L, KEY(TIMEOUT));
        kind = K_RECV;
      }
      lua_replace(L, RV_ERR);
      return receive_wait(L, &tm, tcp, kind);  /* timeouts just read */
    }
  }
  return receive_try(L, tcp);
}

/* ---- send ---------------------------------------------------------------------
 * Stack while it runs: 1 self, 2 data, 3 i, 4 j, 5 inner, 6 err, 7 last byte
 * sent, 8 the values after those three of the last failed try (nil, or a
 * table with n: a debug build of LuaSocket adds the time the call took),
 * 9 deadline. A send returns every value the inner send returned, as
 * cosock 0.2.0 passes them. */
enum { SD_SELF = 1, SD_DATA, SD_I, SD_J, SD_INNER, SD_ERR, SD_LAST, SD_EXTRA, SD_DEADLINE };

static int send_k(lua_State *L, int status, lua_KContext ctx);

/* Returns nil, err, last byte sent and the last try's other values. */
static int send_fail(lua_State *L) {
  int i, n = 0;
  lua_settop(L, SD_DEADLINE);
  lua_pushnil(L);
  lua_pushvalue(L, SD_ERR);
  lua_pushvalue(L, SD_LAST);
  if (lua_istable(L, SD_EXTRA)) {
    lua_getfield(L, SD_EXTRA, "n");
    n = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    luaL_checkstack(L, n, "too many results to return");
    for (i = 1; i <= n; i++) lua_rawgeti(L, SD_EXTRA, i);
  }
  return 3 + n;
}

/* Sends data[i..j], i at index start; returns the number of values the inner
 * send returned, on top, when done; 0 with err, last and the other values
 * stored when it must wait or fail. */
static int send_try(lua_State *L, int start) {
  int n, i;
  lua_settop(L, SD_DEADLINE);
  push_method(L, SD_INNER, KEY(SEND));
  lua_pushvalue(L, SD_DATA);
  lua_pushvalue(L, start);
  lua_pushvalue(L, SD_J);
  lua_call(L, 4, LUA_MULTRET);                 /* done, err, last, ... */
  n = lua_gettop(L) - SD_DEADLINE;
  if (n > 0 && !lua_isnil(L, SD_DEADLINE + 1)) return n;   /* all, as the inner gave them */
  lua_settop(L, SD_DEADLINE + (n < 3 ? 3 : n));
  lua_copy(L, SD_DEADLINE + 2, SD_ERR);
  lua_copy(L, SD_DEADLINE + 3, SD_LAST);
  if (n > 3) {                                 /* (rare: kept for the failure's results) */
    lua_createtable(L, n - 3, 1);
    for (i = 1; i <= n - 3; i++) {
      lua_pushvalue(L, SD_DEADLINE + 3 + i);
      lua_rawseti(L, -2, i);
    }
    lua_pushinteger(L, n - 3);
    lua_setfield(L, -2, "n");
    lua_replace(L, SD_EXTRA);
  } else {
    lua_pushnil(L);
    lua_replace(L, SD_EXTRA);
  }
  lua_settop(L, SD_DEADLINE);
  return 0;
}

/* A whole-string send on a LuaSocket TCP object, written to its fd here
 * (luasocket_tcp.c): what LuaSocket's send would do, without the method
 * call. Returns 1 with the result pushed; 0 when part of it must wait (err
 * and last stored, as send_try leaves them); -1 when LuaSocket's send must
 * run instead (other arguments, another object, or an error: it then meets
 * the error again and reports it in its own words). Only once a send
 * through LuaSocket's own method returned its three values (a debug build
 * of LuaSocket returns four: its sends then always take the method). */
static int send_direct(lua_State *L, cn_loop *lp) {
  size_t len;
  const char *data;
  long n;
  char *tcp;
  if (!lua_isnil(L, SD_I) || !lua_isnil(L, SD_J) || cn_ls_send_nres(lp) != 3 ||
      (tcp = cn_ls_tcp(L, lp, SD_INNER)) == NULL)
    return -1;
  data = lua_tolstring(L, SD_DATA, &len);
  if (len == 0 || (n = cn_ls_send(tcp, data, len)) < 0) return -1;
  if ((size_t)n == len) {
    lua_pushnumber(L, (lua_Number)len);        /* LuaSocket's three: a float, nil, nil */
    lua_pushnil(L);
    lua_pushnil(L);
    return 3;
  }
  lua_pushvalue(L, KEY(TIMEOUT));              /* LuaSocket's would-block error */
  lua_replace(L, SD_ERR);
  lua_pushnumber(L, (lua_Number)n);
  lua_replace(L, SD_LAST);
  return 0;
}

static int send_wait(lua_State *L) {
  int kind = wait_kind(L, SD_ERR, K_SEND), n;
  if (kind >= 0 && (n = wait_begin(L, cn_loop_get(L), SD_SELF, kind, SD_DEADLINE, NULL)) > 0)
    return cn_yieldk(L, n, 0, send_k);
  return send_fail(L);
}

static int send_k(lua_State *L, int status, lua_KContext ctx) {
  int n;
  (void)status;
  (void)ctx;
  if (wait_timed_out(L, SD_DEADLINE)) return send_fail(L);
  lua_settop(L, SD_DEADLINE);
  if (!lua_isnumber(L, SD_LAST))
    return luaL_error(L, "cosock: send: the inner socket's send failed without a byte count");
  /* The retry starts right after the last byte sent: each byte goes once. */
  lua_pushnumber(L, lua_tonumber(L, SD_LAST) + 1);
  lua_replace(L, SD_LAST);
  if ((n = send_try(L, SD_LAST)) > 0) return n;
  return send_wait(L);
}

/* send(data, i, j): LuaSocket's send; what does not fit the socket buffer
 * waits for writability and goes after. Returns the index of the last byte
 * sent, or nil, err, last byte sent, each with any further values of the
 * inner send. */
static int w_send(lua_State *L) {
  CN_RESUMABLE(L);
  luaL_checktype(L, SD_SELF, LUA_TTABLE);
  lua_settop(L, SD_J);
  luaL_checklstring(L, SD_DATA, NULL);
  if (!lua_isnil(L, SD_I)) luaL_checknumber(L, SD_I);   /* (LuaSocket's defaults: 1, -1) */
  if (!lua_isnil(L, SD_J)) luaL_checknumber(L, SD_J);
  check_inner(L, SD_SELF, "send");
  lua_pushnil(L);                              /* err */
  lua_pushnil(L);                              /* last */
  lua_pushnil(L);                              /* extra */
  lua_pushnil(L);                              /* deadline */
  {
    cn_loop *lp = cn_loop_get(L);
    cn_task *t = cn_own_task(lp, L);
    int done = send_direct(L, lp);
    if (done < 0) {
      done = send_try(L, SD_I);
      /* How many values LuaSocket's send returns, learnt on its first
       * success: the fast path gives three, so runs only when that is all. */
      if (done > 0 && cn_ls_send_nres(lp) == 0 && cn_ls_tcp(L, lp, SD_INNER) != NULL)
        cn_ls_learn_send(lp, done);
    }
    /* The next receive on self in this task waits first (see w_receive). */
    if (t) t->sent_by = lua_topointer(L, SD_SELF);
    if (done > 0) return done;
  }
  return send_wait(L);
}

/* ---- wait ---------------------------------------------------------------------
 * wait(self, kind, deadline) -> deadline | nil: the wait between two tries of
 * the wrappers' other calls (accept, connect, handshakes, udp). deadline is
 * nil on the first wait of a call and the value returned by the previous one
 * afterwards; nil back means the call must fail with a timeout. */
static int wait_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  if (wait_timed_out(L, 3)) return 0;
  lua_settop(L, 3);
  return 1;
}

static int w_wait(lua_State *L) {
  static const char *const kinds[] = {"recvr", "sendr", NULL};
  int kind, n;
  CN_RESUMABLE(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  kind = luaL_checkoption(L, 2, NULL, kinds);
  lua_settop(L, 3);
  if (!lua_isnil(L, 3)) luaL_checknumber(L, 3);
  n = wait_begin(L, cn_loop_get(L), 1, kind, 3, NULL);
  if (n == 0) return 0;
  return cn_yieldk(L, n, 0, wait_k);
}

#define KEY_STRING(name, str) str,
void cn_wrapper_open(lua_State *L, cn_loop *lp) {
  static const char *const funcs_that_wait[] = {"receive", "send", "wait", NULL};
  static const luaL_Reg funcs[] = {
    {"receive", w_receive},
    {"send", w_send},
    {"wait", w_wait},
    {NULL, NULL}
  };
  static const char *const keys[] = { KEYS(KEY_STRING) NULL };
  int i;
  /* The loop reads LuaSocket TCP objects' fds itself (closes, first waits). */
  cn_fd_set_reader(lp, cn_ls_fd);
  luaL_checkstack(L, UP_COUNT_ + 1, NULL);
  lua_pushvalue(L, -2);                        /* loop, module */
  for (i = 0; keys[i]; i++) lua_pushstring(L, keys[i]);
  luaL_setfuncs(L, funcs, UP_COUNT_ - 1);
  cn_lift_fields(L, -1, funcs_that_wait);
}
