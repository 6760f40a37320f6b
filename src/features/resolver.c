/* resolver: name lookups that do not block the loop, for cosock.dns
 * (lua/cosock/dns.lua) and the wrappers' calls that take a host name. Owns
 * loop->dns.
 *
 * c-ares does the lookups, driven by the loop itself: its sockets are fds
 * the loop watches (waiters.h, cn_fd_watch; c-ares announces them through
 * its sock_state callback) and its timeouts a cn_xtimer in the loop's heap.
 * There is no thread and no extra poll: an idle resolver holds no fd (c-ares
 * closes its sockets when no query is left) and no timer.
 *
 * A lookup is a Lua call in a task: it makes a lookup (C memory, c-ares's
 * callback argument, which will hold the answer) and its Lua object (a small
 * userdata on the task's stack that points to it), starts the query and
 * parks the task: a bare wait with no fd, as a channel receive's
 * (cn_prepark), or in a coroutine that the task resumes itself, the waker
 * protocol on the object. When c-ares calls back the answer is copied into
 * the lookup (C strings: no Lua may run inside c-ares, it must not be
 * unwound) and the lookup is listed in loop->dns.done; deliver then wakes
 * its task, from the watcher (on_ready) right after c-ares returns, or as
 * the hook's CN_AT_DELIVER point, which the listing turned on, after a timer
 * of the resolver's fired. The continuation turns the strings
 * into LuaSocket's values.
 *
 * Giving up: a lookup that times out, or whose task is cancelled or reset,
 * leaves its query to c-ares, and the answer is dropped when it comes. A
 * lookup is freed once its query has ended and its object is collected.
 * The lookups belong to the resolver, not to their objects: Lua drops a
 * finalizer whose call cannot be made for want of memory, so whatever such
 * an object held is freed with the resolver instead. reset() destroys the
 * channels, which ends every query at once.
 *
 * Channels: the current one takes new lookups. Setting servers or options
 * retires it (it is destroyed as soon as no query is left on it) and the
 * next lookup makes a new one; so a change never cuts a lookup short.
 *
 * A lookup's answer, copied out of c-ares and given to Lua in LuaSocket's
 * values and words, is dns_answer.c's job. */
#define _GNU_SOURCE /* inet_aton */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "resolver.h"

/* Builds without configure (the rock) have no c-ares: say so in the build's
 * output, since nothing else would (lookups then block the loop). */
#if defined(COSOCK_NOCONFIGURE_CONFIG_H) && !defined(HAVE_CARES)
#pragma message("cosock-native is built without c-ares: name lookups use LuaSocket's blocking resolver, which stops every task while it waits (the autotools build with libc-ares-dev, or the Debian package, resolves in the loop)")
#endif

#ifdef HAVE_CARES

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ares.h>

#include "dns_answer.h"
#include "lib/clock.h"
#include "hooks.h"
#include "mem.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "waiters.h"
#include "messages.h"
#include "wakers.h"

typedef struct dns_chan {
  cn_xtimer x;              /* first: the heap hands this pointer back */
  ares_channel ch;
  cn_loop *lp;
  struct cn_resolver *r;
  int nq;                   /* queries in flight on it */
  int failed;               /* errno of a socket the loop could not poll */
  unsigned char retired;    /* the configuration changed: goes once nq is 0 */
  struct dns_chan *next;
} dns_chan;

typedef struct dns_sock { int fd; dns_chan *chan; } dns_sock;

struct cn_resolver {
  dns_chan *chans;          /* the current one first (unless retired), then retired ones */
  dns_sock *socks;          /* which channel each watched fd belongs to */
  int nsocks, capsocks;
  char *servers;            /* "host:port,..." for c-ares, NULL: the system's */
  size_t serverslen;
  int timeout_ms, tries;    /* 0: the system's (resolv.conf, else c-ares's defaults) */
  int nreqs;                /* queries in flight, all channels */
  lua_Integer started;      /* lookups started since the module was loaded */
  struct cn_dnslook *looks; /* every lookup not yet freed */
  int r_anchor;             /* registry: lookup (light) -> its object, while a waker is set */
};

/* A lookup's Lua object: a userdata with the lookup's address, and its waker
 * as user value while one is set. */
typedef struct dns_box { cn_dnslook *look; } dns_box;

/* ---- the done list -------------------------------------------------------- */

static const cn_hook dns_hook;
static void deliver(lua_State *L, cn_loop *lp, int point, cn_task *task);

/* (The hook is on at CN_AT_DELIVER while the list holds lookups.) */
#define done_link(lp, k) cn_hook_list_push(lp, &(lp)->dns.done, &(k)->done, &dns_hook, CN_AT_DELIVER)
#define done_unlink(lp, k) \
  cn_hook_list_remove(lp, &(lp)->dns.done, &(k)->done, &dns_hook, CN_AT_DELIVER)
#define done_first(lp) CN_RLIST_HEAD(&(lp)->dns.done, cn_dnslook, done)

/* Frees the lookup k. No Lua. */
static void look_free(cn_loop *lp, cn_dnslook *k) {
  struct cn_resolver *r = lp->dns.r;
  done_unlink(lp, k);
  if (k->aprev) k->aprev->anext = k->anext;
  else r->looks = k->anext;
  if (k->anext) k->anext->aprev = k->aprev;
  cn_mem_free(&lp->mem, k->buf, k->size);
  cn_mem_free(&lp->mem, k, sizeof *k);
}

/* Frees the lookup k when nobody needs it any more. */
static void look_release(cn_loop *lp, cn_dnslook *k) {
  if (!k->in_flight && !k->boxed) look_free(lp, k);
}

/* The query of k ended with status (and, on success, the strings): when it
 * is still waited for, k takes the answer and is listed. No Lua. */
static void query_end(cn_dnslook *k, int status, const char *const *s, int n, int nalias) {
  dns_chan *c = k->chan;
  cn_loop *lp = c->lp;
  c->nq--;
  lp->dns.r->nreqs--;
  k->in_flight = 0;
  k->chan = NULL;
  if (k->boxed && !k->gave_up) {
    k->state = B_DONE;
    k->status = status;
    if (status == ARES_ECANCELLED && c->failed) k->syserr = c->failed;
    if (status == ARES_SUCCESS) cn_dns_keep_strings(lp, k, s, n);
    k->nalias = nalias;
    done_link(lp, k);
  }
  look_release(lp, k);
}

/* Largest number of addresses or aliases kept from one answer. */
#define MAX_ANSWERS 64

/* Whether the lookup still wants its answer (else the answer is not read). */
static int wanted(const cn_dnslook *k) { return k->boxed && !k->gave_up; }

static void addrinfo_cb(void *arg, int status, int timeouts, struct ares_addrinfo *res) {
  cn_dnslook *q = arg;
  char text[MAX_ANSWERS][INET6_ADDRSTRLEN], ports[MAX_ANSWERS][8];
  const char *s[3 * MAX_ANSWERS];
  int n = 0;
  (void)timeouts;
  if (status == ARES_SUCCESS && wanted(q)) {
    struct ares_addrinfo_node *a;
    for (a = res ? res->nodes : NULL; a != NULL && n < 3 * MAX_ANSWERS; a = a->ai_next) {
      int k = n / 3, port;
      const void *addr;
      if (a->ai_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)a->ai_addr;
        addr = &sin->sin_addr;
        port = ntohs(sin->sin_port);
        s[n] = "inet";
      } else if (a->ai_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)(const void *)a->ai_addr;
        addr = &sin6->sin6_addr;
        port = ntohs(sin6->sin6_port);
        s[n] = "inet6";
      } else {
        continue;
      }
      if (inet_ntop(a->ai_family, addr, text[k], sizeof text[k]) == NULL) continue;
      snprintf(ports[k], sizeof ports[k], "%d", port);
      s[n + 1] = text[k];
      s[n + 2] = ports[k];
      n += 3;
    }
    if (n == 0) status = ARES_ENODATA;
  }
  if (res) ares_freeaddrinfo(res);
  query_end(q, status, s, n, 0);
}

static void host_cb(void *arg, int status, int timeouts, struct hostent *h) {
  cn_dnslook *q = arg;
  char text[MAX_ANSWERS][INET_ADDRSTRLEN];
  const char *s[1 + 2 * MAX_ANSWERS];
  int n = 0, nalias = 0, i;
  (void)timeouts;
  if (status == ARES_SUCCESS && h != NULL && wanted(q)) {
    s[n++] = h->h_name ? h->h_name : "";
    while (h->h_aliases && h->h_aliases[nalias] && nalias < MAX_ANSWERS) s[n++] = h->h_aliases[nalias++];
    for (i = 0; h->h_addrtype == AF_INET && h->h_addr_list && h->h_addr_list[i] && i < MAX_ANSWERS; i++) {
      if (inet_ntop(AF_INET, h->h_addr_list[i], text[i], sizeof text[i]) == NULL) break;
      s[n++] = text[i];
    }
    if (n == 1 + nalias) status = ARES_ENODATA; /* (toip reads the first address) */
  }
  query_end(q, status, s, n, nalias);
}

static void nameinfo_cb(void *arg, int status, int timeouts, char *node, char *service) {
  cn_dnslook *q = arg;
  const char *s[2];
  (void)timeouts;
  s[0] = node ? node : "";
  s[1] = service ? service : "";
  query_end(q, status, s, 2, 0);
}

/* ---- the resolver's fds and channels -------------------------------------- */

static dns_chan *sock_owner(struct cn_resolver *r, int fd) {
  int i;
  for (i = 0; i < r->nsocks; i++)
    if (r->socks[i].fd == fd) return r->socks[i].chan;
  return NULL;
}

/* Notes that fd belongs to c: 0, or -1 when memory is exhausted. */
static int sock_note(cn_loop *lp, struct cn_resolver *r, int fd, dns_chan *c) {
  int i;
  for (i = 0; i < r->nsocks; i++)
    if (r->socks[i].fd == fd) { r->socks[i].chan = c; return 0; }
  if (r->nsocks == r->capsocks) {
    int cap = r->capsocks ? r->capsocks * 2 : 8;
    dns_sock *s = cn_mem_resize(&lp->mem, r->socks, (size_t)r->capsocks * sizeof *s,
                                (size_t)cap * sizeof *s);
    if (s == NULL) return -1;
    r->socks = s;
    r->capsocks = cap;
  }
  r->socks[r->nsocks].fd = fd;
  r->socks[r->nsocks++].chan = c;
  return 0;
}

static void sock_forget(struct cn_resolver *r, int fd) {
  int i;
  for (i = 0; i < r->nsocks; i++)
    if (r->socks[i].fd == fd) { r->socks[i] = r->socks[--r->nsocks]; return; }
}

/* c-ares's sock_state callback: fd opened or changed (readable, writable:
 * what c-ares wants to hear about), or is about to close (0, 0). A socket
 * the loop cannot poll fails the channel's queries (settle cancels them,
 * outside c-ares). */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable) {
  dns_chan *c = data;
  cn_loop *lp = c->lp;
  struct cn_resolver *r = c->r;
  int events = (readable ? CN_READ : 0) | (writable ? CN_WRITE : 0);
  if (events == 0) {
    sock_forget(r, fd);
    cn_fd_watch(lp, fd, 0);
    return;
  }
  if (sock_note(lp, r, fd, c) != 0) errno = ENOMEM;
  else if (cn_fd_watch(lp, fd, events) == 0) return;
  if (!c->failed) c->failed = errno ? errno : EIO;
}

static void chan_destroy(cn_loop *lp, dns_chan *c) {
  struct cn_resolver *r = lp->dns.r;
  dns_chan **pp;
  cn_xtimer_disarm(lp, &c->x);
  cn_xtimer_unreserve(lp);
  ares_destroy(c->ch);                         /* ends its queries (their callbacks run) */
  for (pp = &r->chans; *pp != NULL; pp = &(*pp)->next)
    if (*pp == c) { *pp = c->next; break; }
  cn_mem_free(&lp->mem, c, sizeof *c);
}

/* After every call into c-ares on c: a socket that could not be polled
 * fails the queries; a retired channel with no query left goes; the timer
 * follows c-ares's next timeout. No Lua. */
static void settle(cn_loop *lp, dns_chan *c) {
  struct timeval tv, *tvp;
  if (c->failed) {
    if (c->nq > 0) ares_cancel(c->ch);         /* their callbacks say why */
    c->failed = 0;
  }
  if (c->retired && c->nq == 0) {
    chan_destroy(lp, c);
    return;
  }
  tvp = c->nq > 0 ? ares_timeout(c->ch, NULL, &tv) : NULL;
  /* (+1 ms: c-ares counts whole milliseconds, and a timer that fires before
   * its query is due would only be armed again at once) */
  if (tvp != NULL)
    cn_xtimer_arm(lp, &c->x, cn_clock_now() + (double)tv.tv_sec + tv.tv_usec / 1e6 + 0.001);
  else cn_xtimer_disarm(lp, &c->x);
}

/* The channel's timer is due: c-ares retries or gives up what timed out. */
static void chan_fire(cn_loop *lp, cn_xtimer *x) {
  dns_chan *c = (dns_chan *)x;
  ares_process_fd(c->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
  settle(lp, c);
}

/* The watcher (waiters.c): a socket of the resolver's is ready. */
static void on_ready(lua_State *L, cn_loop *lp, int fd, int events) {
  dns_chan *c = lp->dns.r ? sock_owner(lp->dns.r, fd) : NULL;
  if (c == NULL) {                             /* (not ours any more) */
    cn_fd_watch(lp, fd, 0);
    return;
  }
  ares_process_fd(c->ch, (events & (CN_READ | CN_INVALID)) ? fd : ARES_SOCKET_BAD,
                  (events & CN_WRITE) ? fd : ARES_SOCKET_BAD);
  settle(lp, c);
  deliver(L, lp, CN_AT_DELIVER, NULL);
}

/* The resolver of the loop, made on first use (may raise). */
static struct cn_resolver *resolver(lua_State *L, cn_loop *lp) {
  struct cn_resolver *r = lp->dns.r;
  const char *env = getenv("COSOCK_DNS_SERVERS");
  size_t envlen = env != NULL && *env != '\0' ? strlen(env) + 1 : 0;
  char *servers = NULL;
  int status, anchor;
  if (r != NULL) return r;
  lua_newtable(L);                             /* may raise: nothing made yet */
  anchor = luaL_ref(L, LUA_REGISTRYINDEX);
  r = cn_mem_resize(&lp->mem, NULL, 0, sizeof *r);
  if (envlen && r != NULL && (servers = cn_mem_resize(&lp->mem, NULL, 0, envlen)) == NULL) {
    cn_mem_free(&lp->mem, r, sizeof *r);
    r = NULL;
  }
  if (r == NULL) {
    luaL_unref(L, LUA_REGISTRYINDEX, anchor);
    luaL_error(L, CN_MSG_NO_MEMORY);
  }
  status = ares_library_init(ARES_LIB_INIT_ALL);
  if (status != ARES_SUCCESS) {
    cn_mem_free(&lp->mem, servers, envlen);
    cn_mem_free(&lp->mem, r, sizeof *r);
    luaL_unref(L, LUA_REGISTRYINDEX, anchor);
    luaL_error(L, "cosock: cannot start the resolver: %s", ares_strerror(status));
  }
  memset(r, 0, sizeof *r);
  r->r_anchor = anchor;
  if (envlen) memcpy(servers, env, envlen);
  r->servers = servers;
  r->serverslen = envlen;
  lp->dns.r = r;
  cn_fd_set_watcher(lp, on_ready);
  return r;
}

/* The channel new lookups go to, made when there is none (may raise). */
static dns_chan *channel(lua_State *L, cn_loop *lp) {
  struct cn_resolver *r = resolver(L, lp);
  struct ares_options o;
  dns_chan *c;
  int mask = ARES_OPT_SOCK_STATE_CB, status;
  if (r->chans != NULL && !r->chans->retired) return r->chans;
  c = cn_mem_resize(&lp->mem, NULL, 0, sizeof *c);
  if (c == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
  memset(c, 0, sizeof *c);
  c->lp = lp;
  c->r = r;
  th_node_init(&c->x.node);
  c->x.fire = chan_fire;
  if (cn_xtimer_reserve(lp) != 0) {
    cn_mem_free(&lp->mem, c, sizeof *c);
    luaL_error(L, CN_MSG_NO_MEMORY);
  }
  memset(&o, 0, sizeof o);
  o.sock_state_cb = sock_state;
  o.sock_state_cb_data = c;
  if (r->timeout_ms > 0) { o.timeout = r->timeout_ms; mask |= ARES_OPT_TIMEOUTMS; }
  if (r->tries > 0) { o.tries = r->tries; mask |= ARES_OPT_TRIES; }
  status = ares_init_options(&c->ch, &o, mask);
  if (status == ARES_SUCCESS && r->servers != NULL) {
    status = ares_set_servers_ports_csv(c->ch, r->servers);
    if (status != ARES_SUCCESS) ares_destroy(c->ch);
  }
  if (status != ARES_SUCCESS) {
    cn_xtimer_unreserve(lp);
    cn_mem_free(&lp->mem, c, sizeof *c);
    luaL_error(L, "cosock: cannot start the resolver (%s): %s",
               r->servers ? r->servers : "system configuration", ares_strerror(status));
  }
  c->next = r->chans;
  r->chans = c;
  return c;
}

/* Retires the current channel (new lookups make a new one). No Lua. */
static void retire(cn_loop *lp, struct cn_resolver *r) {
  dns_chan *c = r->chans;
  if (c == NULL || c->retired) return;
  c->retired = 1;
  if (c->nq == 0) chan_destroy(lp, c);
}

/* ---- lookup objects ----------------------------------------------------- */

/* The wait for k ended without its answer: the answer is dropped. */
static void give_up(cn_dnslook *k) {
  k->gave_up = 1;
}

/* The lookup object of this loop at index idx, or NULL. */
static dns_box *to_box(lua_State *L, cn_loop *lp, int idx) {
  dns_box *b = lua_touserdata(L, idx);
  int ours = 0;
  if (b != NULL && lua_getmetatable(L, idx)) {
    cn_push_ref(L, lp->dns.r_mt);
    ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return ours ? b : NULL;
}

/* The lookup of the object at index idx (it has one while it lives). */
static cn_dnslook *look_at(lua_State *L, int idx) {
  return ((dns_box *)lua_touserdata(L, idx))->look;
}

/* Takes the waker of the lookup k, whose object is at index ud, off (and
 * its anchor); pushes it (nil when none). Cannot fail. */
static void take_waker(lua_State *L, cn_loop *lp, cn_dnslook *k, int ud) {
  ud = lua_absindex(L, ud);
  cn_getuservalue(L, ud);
  if (k == NULL || !k->waker) return;
  k->waker = 0;
  cn_anchored_drop(L, lp->dns.r->r_anchor, k, ud);
}

/* __gc: the object goes; its lookup with it unless its query is in flight
 * (then when it ends). After the loop's own __gc (lua_close) the lookups are
 * gone already. */
static int box_gc(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  dns_box *b = to_box(L, lp, 1);
  cn_dnslook *k;
  if (b == NULL) return 0;
  k = b->look;
  b->look = NULL;
  lp->dns.nboxes--;
  if (k == NULL || lp->dns.r == NULL) return 0;
  k->boxed = 0;
  done_unlink(lp, k);
  look_release(lp, k);
  return 0;
}

/* lookup:setwaker("recvr", fn | nil): the waker protocol, for a lookup
 * waited on from a coroutine the task resumes itself. One waker; a waker set
 * on a lookup that has its answer is called at once. */
static int box_setwaker(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  dns_box *b = to_box(L, lp, 1);
  const char *kind = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  cn_dnslook *k;
  lua_settop(L, 3);
  if (b == NULL || b->look == NULL)
    return cn_argerror(L, 1, "setwaker", "cosock lookup expected, got %s",
                      luaL_typename(L, 1));
  k = b->look;
  if (kind == NULL || strcmp(kind, "recvr") != 0)
    return cn_wake_kind_error(L, 2);
  if (lua_isnil(L, 3)) {
    take_waker(L, lp, k, 1);
    return 0;
  }
  luaL_checktype(L, 3, LUA_TFUNCTION);
  if (k->waker)
    return luaL_error(L, "recvr " CN_MSG_SOCKET_WAKER_SET);
  cn_anchored_set(L, lp->dns.r->r_anchor, k, 1, 3);
  k->waker = 1;
  if (k->state == B_DONE) {
    done_unlink(lp, k);
    take_waker(L, lp, k, 1);
    lua_call(L, 0, 0);
  }
  return 0;
}

/* CN_AT_DELIVER: tells the lookups that ended their tasks: a task parked
 * on its lookup is made ready, a waker set on a lookup object is called (its
 * error propagates; the others stay listed). */
static void deliver(lua_State *L, cn_loop *lp, int point, cn_task *task) {
  cn_dnslook *k;
  unsigned char was;
  (void)point;
  (void)task;
  luaL_checkstack(L, 4, NULL);
  was = cn_cause_set(lp, CN_CAUSE_LOOKUP);     /* (a trace's wake cause; a waker that raises */
  while ((k = done_first(lp)) != NULL) {       /*  leaves it: cleared at the next turn) */
    done_unlink(lp, k);
    if (k->slot >= 0) {
      cn_task *t = cn_task_get(lp, k->slot);
      if (t != NULL && t->waitid == k->waitid && t->bare && t->state == T_PARKED)
        cn_deliver(L, lp, t, 0);
    } else if (k->waker) {                     /* (anchored while its waker is set) */
      cn_push_ref(L, lp->dns.r->r_anchor);
      lua_rawgetp(L, -1, k);                   /* anchor, object */
      take_waker(L, lp, k, -1);                /* anchor, object, fn */
      lua_call(L, 0, 0);
      lua_pop(L, 2);
    }
  }
  cn_cause_set(lp, was);
}

/* Pushes the object of a new lookup for op on channel c, counted as in
 * flight (may raise: nothing is started yet). */
static cn_dnslook *new_lookup(lua_State *L, cn_loop *lp, dns_chan *c, int op) {
  struct cn_resolver *r = lp->dns.r;
  dns_box *b = lua_newuserdata(L, sizeof *b);
  cn_dnslook *k;
  b->look = NULL;
  cn_push_ref(L, lp->dns.r_mt);
  lua_setmetatable(L, -2);
  lp->dns.nboxes++;
  k = cn_mem_resize(&lp->mem, NULL, 0, sizeof *k);
  if (k == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
  memset(k, 0, sizeof *k);
  k->op = (unsigned char)op;
  k->slot = -1;
  k->boxed = 1;
  k->in_flight = 1;
  k->chan = c;
  k->anext = r->looks;
  if (r->looks) r->looks->aprev = k;
  r->looks = k;
  b->look = k;
  c->nq++;
  r->nreqs++;
  r->started++;
  return k;
}

static int timed_out(lua_State *L) {
  cn_wait_end(L, cn_loop_get(L), 1);
  lua_pushnil(L);
  lua_pushliteral(L, CN_MSG_TIMEOUT);
  return 2;
}

static int wait_k(lua_State *L, int status, lua_KContext ctx);

/* Yields the waker-protocol tuple ({object}, nil, timeout, INTERNAL) for
 * the lookup object at index box; the timeout is at index box - 1 (nil:
 * none). */
static int yield_protocol(lua_State *L, int box) {
  lua_createtable(L, 1, 0);
  lua_pushvalue(L, box);
  lua_rawseti(L, -2, 1);
  lua_pushnil(L);
  lua_pushvalue(L, box - 1);
  lua_pushlightuserdata(L, CN_INTERNAL);
  return cn_yieldk(L, 4, (lua_KContext)box, wait_k);
}

/* After the wait: the answer if it came, else "timeout" (the answer is then
 * dropped when it comes). In the waker protocol a resume that is neither
 * (the task resumed this coroutine for something else) waits again. */
static int wait_k(lua_State *L, int status, lua_KContext ctx) {
  cn_loop *lp = cn_loop_get(L);
  int box = (int)ctx, n = lua_gettop(L) - box;
  cn_dnslook *b = look_at(L, box);
  (void)status;
  if (b->state == B_DONE) {
    done_unlink(lp, b);
    return cn_dns_push_result(L, b);
  }
  if (b->slot >= 0 || (n >= 3 && lua_type(L, box + 3) == LUA_TSTRING)) {
    give_up(b);
    return timed_out(L);
  }
  lua_settop(L, box);
  return yield_protocol(L, box);
}

/* The lookup whose object is at index box has started: its answer at once when
 * c-ares had it (/etc/hosts, a numeric address), else the task waits for it
 * (the timeout is at index box - 1). */
static int await(lua_State *L, cn_loop *lp, int box) {
  cn_dnslook *b = look_at(L, box);
  int has_timeout = !lua_isnil(L, box - 1);
  double timeout = has_timeout ? lua_tonumber(L, box - 1) : 0;
  lua_Integer wid;
  if (b->state == B_DONE) {
    done_unlink(lp, b);
    return cn_dns_push_result(L, b);
  }
  if (has_timeout && timeout <= 0) {           /* may not wait */
    give_up(b);
    return timed_out(L);
  }
  luaL_checkstack(L, 6, NULL);
  {
    cn_tmo tmo;
    tmo.set = (unsigned char)has_timeout;
    tmo.is_int = 0;
    tmo.ival = 0;
    tmo.secs = timeout;
    cn_what_set(lp, CN_WHAT_LOOKUP);           /* (for a trace: what it waits on) */
    wid = cn_prepark(L, lp, K_RECV, &tmo, 0);
  }
  if (wid != 0) {                              /* nothing may raise from here to the yield */
    b->slot = cn_current_slot(lp);
    b->waitid = wid;
    lua_pushvalue(L, box);
    return cn_yieldk(L, 1, (lua_KContext)box, wait_k);
  }
  return yield_protocol(L, box);
}

/* Checks the timeout argument at idx (nil, or a number; negative: none) and
 * leaves it there as nil or a number >= 0. */
static void check_timeout(lua_State *L, int idx) {
  if (lua_isnil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TNUMBER || lua_tonumber(L, idx) != lua_tonumber(L, idx))
    luaL_argerror(L, idx, "number or nil expected");
  if (lua_tonumber(L, idx) < 0) {
    lua_pushnil(L);
    lua_replace(L, idx);
  }
}

/* Starts a lookup: the caller pushed the timeout; returns the index of the
 * lookup's object (on top). May raise before anything is started. */
static int begin(lua_State *L, cn_loop *lp, int op, dns_chan **c, cn_dnslook **q) {
  if (!cn_isyieldable(L))
    luaL_error(L, "cosock: a name lookup must wait, and cannot here (not in a coroutine)");
  *c = channel(L, lp);
  *q = new_lookup(L, lp, *c, op);
  return lua_gettop(L);
}

/* Fails the lookup whose object is at index box at once with status (no
 * query is made). */
static int fail_now(lua_State *L, cn_loop *lp, int box, int status) {
  query_end(look_at(L, box), status, NULL, 0, 0);
  return await(L, lp, box);
}

static int family_of(lua_State *L, int idx) {
  static const char *const names[] = {"unspec", "inet", "inet6", NULL};
  static const int values[] = {AF_UNSPEC, AF_INET, AF_INET6};
  return values[luaL_checkoption(L, idx, "unspec", names)];
}

/* ---- Lua functions ------------------------------------------------------------ */

/* dns_getaddrinfo(host, family, timeout [, service]) -> {{family=, addr=
 * [, port=]}, ...} | nil, err. family: "unspec", "inet", "inet6"; service:
 * a port or service name (then each entry has its port). SOCK_STREAM hints,
 * as LuaSocket's getaddrinfo. timeout: seconds (nil or negative: none). */
static int l_getaddrinfo(lua_State *L) {
  CN_RESUMABLE(L);
  cn_loop *lp = cn_loop_get(L);
  const char *host = luaL_checkstring(L, 1);
  int family = family_of(L, 2), numeric, box;
  const char *serv = luaL_optstring(L, 4, NULL);
  struct ares_addrinfo_hints hints;
  dns_chan *c;
  cn_dnslook *q;
  lua_settop(L, 4);
  check_timeout(L, 3);
  lua_pushvalue(L, 3);                         /* 5: timeout */
  box = begin(L, lp, OP_ADDRINFO, &c, &q);     /* 6 */
  q->want_port = serv != NULL;
  numeric = cn_dns_numeric_family(host);
  /* A literal of the other family, or nothing: glibc answers at once. */
  if ((numeric == 4 && family == AF_INET6) || (numeric == 6 && family == AF_INET))
    return fail_now(L, lp, box, ARES_EBADFAMILY);
  if (*host == '\0') return fail_now(L, lp, box, ARES_ENOTFOUND);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  ares_getaddrinfo(c->ch, host, serv, &hints, addrinfo_cb, q);
  settle(lp, c);
  return await(L, lp, box);
}

/* dns_gethost(host, timeout) -> name, {name, alias, ip} | nil, err: the
 * lookup of LuaSocket's toip and tohostname (IPv4): by address when host is
 * a dotted quad (a reverse lookup), else by name. */
static int l_gethost(lua_State *L) {
  CN_RESUMABLE(L);
  cn_loop *lp = cn_loop_get(L);
  const char *host = luaL_checkstring(L, 1);
  struct in_addr a4;
  int box;
  dns_chan *c;
  cn_dnslook *q;
  lua_settop(L, 2);
  check_timeout(L, 2);
  lua_pushvalue(L, 2);                         /* 3: timeout */
  box = begin(L, lp, OP_HOST, &c, &q);         /* 4 */
  if (inet_aton(host, &a4)) {
    ares_gethostbyaddr(c->ch, &a4, sizeof a4, AF_INET, host_cb, q);
  } else if (*host == '\0' || cn_dns_numeric_family(host) == 6) {
    return fail_now(L, lp, box, ARES_ENOTFOUND); /* no IPv4 name there */
  } else {
    ares_gethostbyname(c->ch, host, AF_INET, host_cb, q);
  }
  settle(lp, c);
  return await(L, lp, box);
}

/* dns_nameinfo(addr, port, host?, service?, timeout) -> node, service |
 * nil, err: the reverse lookup of a numeric address (LuaSocket's
 * getnameinfo, for one of the addresses its host resolved to). Without a
 * name the node is the address itself, as getnameinfo gives it. */
static int l_nameinfo(lua_State *L) {
  CN_RESUMABLE(L);
  cn_loop *lp = cn_loop_get(L);
  const char *addr = luaL_checkstring(L, 1);
  lua_Integer port = luaL_checkinteger(L, 2);
  int want_host = lua_toboolean(L, 3), want_serv = lua_toboolean(L, 4), flags = 0, box;
  struct sockaddr_storage ss;
  socklen_t len;
  dns_chan *c;
  cn_dnslook *q;
  luaL_argcheck(L, port >= 0 && port <= 65535, 2, "port out of range");
  memset(&ss, 0, sizeof ss);
  if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
    ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
    ((struct sockaddr_in *)&ss)->sin_port = htons((unsigned short)port);
    len = sizeof(struct sockaddr_in);
  } else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
    ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
    ((struct sockaddr_in6 *)&ss)->sin6_port = htons((unsigned short)port);
    len = sizeof(struct sockaddr_in6);
  } else {
    return luaL_argerror(L, 1, "numeric address expected");
  }
  lua_settop(L, 5);
  check_timeout(L, 5);
  lua_pushvalue(L, 5);                         /* 6: timeout */
  box = begin(L, lp, OP_NAMEINFO, &c, &q);     /* 7 */
  if (want_host) flags |= ARES_NI_LOOKUPHOST;
  if (want_serv) flags |= ARES_NI_LOOKUPSERVICE;
  ares_getnameinfo(c->ch, (struct sockaddr *)&ss, len, flags, nameinfo_cb, q);
  settle(lp, c);
  return await(L, lp, box);
}

/* dns_config(servers, timeout, tries): servers "host[:port],..." (IPv6 in
 * brackets with a port; checked by the caller) or nil for the system's;
 * timeout (seconds, per try) and tries, nil for the system's. Lookups
 * already in flight finish on the channel they started on. */
static int l_config(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_resolver *r = resolver(L, lp);
  size_t len = 0;
  const char *servers = luaL_optlstring(L, 1, NULL, &len);
  lua_Number timeout = luaL_optnumber(L, 2, 0);
  lua_Integer tries = luaL_optinteger(L, 3, 0);
  char *copy = NULL;
  luaL_argcheck(L, timeout >= 0 && timeout <= 3600, 2, "seconds between 0 and 3600 expected");
  luaL_argcheck(L, tries >= 0 && tries <= 100, 3, "count between 0 and 100 expected");
  if (servers != NULL) {
    copy = cn_mem_resize(&lp->mem, NULL, 0, len + 1);
    if (copy == NULL) return luaL_error(L, CN_MSG_NO_MEMORY);
    memcpy(copy, servers, len + 1);
  }
  cn_mem_free(&lp->mem, r->servers, r->serverslen);
  r->servers = copy;
  r->serverslen = copy ? len + 1 : 0;
  r->timeout_ms = timeout > 0 && timeout * 1000 < 1 ? 1 : (int)(timeout * 1000);
  r->tries = (int)tries;
  retire(lp, r);
  return 0;
}

/* dns_numeric(s) -> 4, 6 or false: whether s is a numeric address, which
 * LuaSocket takes without any lookup (the wrappers' fast path). */
static int l_numeric(lua_State *L) {
  int f = lua_type(L, 1) == LUA_TSTRING ? cn_dns_numeric_family(lua_tostring(L, 1)) : 0;
  if (f) lua_pushinteger(L, f);
  else lua_pushboolean(L, 0);
  return 1;
}

/* dns_stats() -> {lookups, objects, channels, fds, started}: queries in
 * flight, lookup objects not yet collected, c-ares channels, sockets the
 * loop watches for them, lookups started so far. For the specs (nothing left
 * behind, no lookup made) and the bench. */
static int l_stats(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_resolver *r = lp->dns.r;
  int nchan = 0;
  dns_chan *c;
  for (c = r ? r->chans : NULL; c != NULL; c = c->next) nchan++;
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, r ? r->started : 0);
  lua_setfield(L, -2, "started");
  lua_pushinteger(L, r ? r->nreqs : 0);
  lua_setfield(L, -2, "lookups");
  lua_pushinteger(L, lp->dns.nboxes);
  lua_setfield(L, -2, "objects");
  lua_pushinteger(L, nchan);
  lua_setfield(L, -2, "channels");
  lua_pushinteger(L, r ? r->nsocks : 0);
  lua_setfield(L, -2, "fds");
  return 1;
}

/* Destroys every channel: the queries end (EDESTRUCTION), their lookups are
 * listed as done and then unlisted here, as their tasks are gone. */
static void destroy_all(cn_loop *lp) {
  struct cn_resolver *r = lp->dns.r;
  cn_dnslook *k;
  while (r->chans != NULL) chan_destroy(lp, r->chans);
  while ((k = done_first(lp)) != NULL) done_unlink(lp, k);
}

/* (For reset: the lookup at key has no waker now.) */
static void forget_waker(void *key) { ((cn_dnslook *)key)->waker = 0; }

/* reset(): every lookup in flight ends and its answer is dropped; the
 * servers and options set stay. */
static void dns_reset(lua_State *L, cn_loop *lp) {
  struct cn_resolver *r = lp->dns.r;
  if (r == NULL) return;
  destroy_all(lp);
  /* The lookups with a waker: take it off (no allocation: fields to nil). */
  cn_anchored_clear(L, r->r_anchor, forget_waker);
}

static void dns_free(lua_State *L, cn_loop *lp) {
  struct cn_resolver *r = lp->dns.r;
  cn_unref(L, &lp->dns.r_mt);
  if (r == NULL) return;
  destroy_all(lp);
  while (r->looks != NULL) look_free(lp, r->looks); /* (those whose objects live on) */
  cn_unref(L, &r->r_anchor);
  cn_mem_free(&lp->mem, r->socks, (size_t)r->capsocks * sizeof *r->socks);
  cn_mem_free(&lp->mem, r->servers, r->serverslen);
  cn_mem_free(&lp->mem, r, sizeof *r);
  lp->dns.r = NULL;
  ares_library_cleanup();
}

static const cn_hook dns_hook = {
  .name = "resolver", .at = deliver, .reset = dns_reset, .free = dns_free
};
void cn_dns_init(lua_State *L, cn_loop *lp) {
  cn_hook_add(L, lp, &dns_hook);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, l_stats, 1);
  lua_setfield(L, -2, "dns_stats");
  lua_pushliteral(L, "c-ares");
  lua_setfield(L, -2, "dns");
  lua_pushstring(L, ares_version(NULL));
  lua_setfield(L, -2, "dns_version");
}

void cn_dns_open(lua_State *L, cn_loop *lp) {
  static const char *const waits[] = {"dns_getaddrinfo", "dns_gethost", "dns_nameinfo", NULL};
  static const luaL_Reg funcs[] = {
    {"dns_getaddrinfo", l_getaddrinfo}, {"dns_gethost", l_gethost},
    {"dns_nameinfo", l_nameinfo}, {"dns_config", l_config},
    {"dns_numeric", l_numeric}, {NULL, NULL}
  };
  lua_createtable(L, 0, 3);                    /* loop, module, mt */
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, box_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, -4);
  lua_pushcclosure(L, box_setwaker, 1);
  lua_setfield(L, -2, "setwaker");
  lua_setfield(L, -2, "__index");
  lua_pushliteral(L, "cosock.dns lookup");
  lua_setfield(L, -2, "__name");
  lp->dns.r_mt = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, funcs, 1);
  cn_lift_fields(L, -1, waits);
}

#else /* no c-ares: LuaSocket's blocking resolver stays */

void cn_dns_init(lua_State *L, cn_loop *lp) {
  (void)lp;
  lua_pushliteral(L, "luasocket");
  lua_setfield(L, -2, "dns");
}

void cn_dns_open(lua_State *L, cn_loop *lp) { (void)L; (void)lp; }

#endif
