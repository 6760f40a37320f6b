/* dns_answer: a lookup of the resolver (resolver.c) and its answer: the
 * strings copied out of c-ares, pushed as LuaSocket gives them, its errors
 * worded as LuaSocket words them; and the numeric addresses glibc's
 * getaddrinfo takes (dns_answer.c). Needs c-ares; no Lua runs inside c-ares,
 * so the copy is C only. */
#ifndef COSOCK_DNS_ANSWER_H
#define COSOCK_DNS_ANSWER_H

#include "compat.h"

#include "loop.h"

/* What a lookup asks. */
enum { OP_ADDRINFO = 1, OP_HOST, OP_NAMEINFO };
/* A lookup's state. */
enum { B_PENDING = 0, B_DONE };

typedef struct cn_dnslook {
  cn_rlink done;            /* in loop->dns.done */
  struct cn_dnslook *aprev, *anext; /* r->looks */
  struct dns_chan *chan;    /* its query's channel, while in flight */
  char *buf;                /* the answer: n strings one after the other */
  size_t size;
  int n, nalias;            /* strings; OP_HOST: how many are aliases */
  int status, syserr;       /* c-ares status; errno when the loop cancelled it */
  int slot;                 /* the task parked on it (bare wait), -1: waker protocol */
  lua_Integer waitid;
  unsigned char op, state, waker;
  unsigned char want_port;  /* OP_ADDRINFO: a service was asked for: say the port */
  unsigned char in_flight;  /* c-ares has its query */
  unsigned char boxed;      /* its Lua object lives (the object's __gc clears it) */
  unsigned char gave_up;    /* its wait ended without it: the answer is dropped */
} cn_dnslook;

/* Copies the n strings into b (one block from the loop's allocator). No Lua:
 * runs inside c-ares. A failure makes the lookup fail with ENOMEM. */
void cn_dns_keep_strings(cn_loop *lp, cn_dnslook *b, const char *const *s, int n);
/* Pushes what the lookup b returns (its answer stays until the lookup is
 * freed): LuaSocket's values, or nil and LuaSocket's words for its error. */
int cn_dns_push_result(lua_State *L, cn_dnslook *b);
/* A numeric address as glibc's getaddrinfo takes one: IPv4 in inet_aton's
 * forms (no trailing text), IPv6 with an optional %scope. 4 or 6, 0 if not. */
int cn_dns_numeric_family(const char *s);

#endif
