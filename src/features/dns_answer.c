/* dns_answer: the answer of a name lookup (dns_answer.h): copied out of
 * c-ares as C strings, given to Lua as LuaSocket gives it, its errors in
 * LuaSocket's words; and which strings are numeric addresses. No state. */
#define _GNU_SOURCE /* hstrerror, EAI_NODATA, EAI_ADDRFAMILY */
#include "config.h"

#ifdef HAVE_CARES

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ares.h>
#include <lauxlib.h>

#include "dns_answer.h"
#include "mem.h"

/* Copies the n strings into b (one block from the loop's allocator). No Lua:
 * runs inside c-ares. A failure makes the lookup fail with ENOMEM. */
void cn_dns_keep_strings(cn_loop *lp, cn_dnslook *b, const char *const *s, int n) {
  size_t size = 0, len;
  int i;
  char *p;
  for (i = 0; i < n; i++) size += strlen(s[i]) + 1;
  b->buf = size ? cn_mem_resize(&lp->mem, NULL, 0, size) : NULL;
  if (size && b->buf == NULL) {
    b->status = ARES_ENOMEM;
    return;
  }
  b->size = size;
  b->n = n;
  for (i = 0, p = b->buf; i < n; i++, p += len + 1) {
    len = strlen(s[i]);
    memcpy(p, s[i], len + 1);
  }
}

/* ---- errors as LuaSocket words them ----------------------------------------
 * LuaSocket's toip/tohostname report the system resolver's h_errno, its
 * getaddrinfo and connect the EAI_* code, through its own strings where it
 * has them (socket_hoststrerror, socket_gaistrerror) and the system's
 * otherwise. c-ares's status is mapped to what glibc's resolver sets for the
 * same answer: NXDOMAIN is "not found", no address of that kind is NO_DATA /
 * EAI_NODATA, a server that fails or does not answer is "try again", a
 * refusal or an answer that cannot be read is "no recovery". */

static const char *gai_text(const cn_dnslook *b) {
  switch (b->status) {
    case ARES_ENOTFOUND: case ARES_EBADNAME: case ARES_ENONAME:
      return "host or service not provided, or not known";
    case ARES_ENODATA: return gai_strerror(EAI_NODATA);
    case ARES_ETIMEOUT: case ARES_ECONNREFUSED: case ARES_ESERVFAIL:
      return "temporary failure in name resolution";
    case ARES_ENOMEM: return "memory allocation failure";
    case ARES_ESERVICE: return "service not supported for socket type";
    case ARES_EBADFAMILY: return gai_strerror(EAI_ADDRFAMILY); /* a literal of the other family */
    case ARES_ECANCELLED:
      if (b->syserr == ENOMEM) return "memory allocation failure";
      if (b->syserr) return strerror(b->syserr);
    /* fall through */
    default: return "non-recoverable failure in name resolution";
  }
}

static const char *host_text(const cn_dnslook *b) {
  switch (b->status) {
    case ARES_ENOTFOUND: case ARES_EBADNAME: case ARES_ENONAME: return "host not found";
    case ARES_ENODATA: return hstrerror(NO_DATA);
    case ARES_ETIMEOUT: case ARES_ECONNREFUSED: case ARES_ESERVFAIL: return hstrerror(TRY_AGAIN);
    case ARES_ENOMEM: return "memory allocation failure";
    case ARES_ECANCELLED:
      if (b->syserr == ENOMEM) return "memory allocation failure";
      if (b->syserr) return strerror(b->syserr);
    /* fall through */
    default: return hstrerror(NO_RECOVERY);
  }
}

static const char *next_string(const char *p) { return p + strlen(p) + 1; }

/* Pushes what the lookup b returns (its answer stays until the lookup is
 * freed). */
int cn_dns_push_result(lua_State *L, cn_dnslook *b) {
  const char *p = b->buf;
  int i;
  luaL_checkstack(L, 6, NULL);
  if (b->status != ARES_SUCCESS) {
    lua_pushnil(L);
    lua_pushstring(L, b->op == OP_HOST ? host_text(b) : gai_text(b));
    return 2;
  }
  switch (b->op) {
    case OP_ADDRINFO:                          /* {{family=, addr=, port=}, ...} */
      lua_createtable(L, b->n / 3, 0);
      for (i = 0; i < b->n / 3; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, p);
        lua_setfield(L, -2, "family");
        p = next_string(p);
        lua_pushstring(L, p);
        lua_setfield(L, -2, "addr");
        p = next_string(p);
        if (b->want_port) {
          lua_pushinteger(L, (lua_Integer)strtol(p, NULL, 10));
          lua_setfield(L, -2, "port");
        }
        p = next_string(p);
        lua_rawseti(L, -2, i + 1);
      }
      return 1;
    case OP_HOST:                              /* name, {name=, alias={}, ip={}} */
      lua_pushstring(L, p);
      lua_createtable(L, 0, 3);
      lua_pushstring(L, p);
      lua_setfield(L, -2, "name");
      p = next_string(p);
      lua_createtable(L, b->nalias, 0);
      for (i = 0; i < b->nalias; i++, p = next_string(p)) {
        lua_pushstring(L, p);
        lua_rawseti(L, -2, i + 1);
      }
      lua_setfield(L, -2, "alias");
      lua_createtable(L, b->n - 1 - b->nalias, 0);
      for (i = 0; i < b->n - 1 - b->nalias; i++, p = next_string(p)) {
        lua_pushstring(L, p);
        lua_rawseti(L, -2, i + 1);
      }
      lua_setfield(L, -2, "ip");
      return 2;
    default:                                   /* node, service */
      lua_pushstring(L, p);
      lua_pushstring(L, next_string(p));
      return 2;
  }
}

/* True for the usual IPv4 form, four decimal parts of 0-255 without leading
 * zeros ("127.0.0.1"): every connect to a numeric host asks, and this costs
 * a tenth of inet_aton. Anything else is left to inet_aton's forms. */
static int dotted_quad(const char *s) {
  int part, digits, parts = 0;
  for (;;) {
    part = digits = 0;
    while (*s >= '0' && *s <= '9') {
      if (digits > 0 && part == 0) return 0;   /* a leading zero (octal for inet_aton) */
      part = part * 10 + (*s++ - '0');
      if (++digits > 3) return 0;
    }
    if (digits == 0 || part > 255) return 0;
    if (++parts == 4) return *s == '\0';
    if (*s++ != '.') return 0;
  }
}

/* A numeric address as glibc's getaddrinfo takes one: IPv4 in inet_aton's
 * forms (no trailing text), IPv6 with an optional %scope. 4 or 6, 0 if not. */
int cn_dns_numeric_family(const char *s) {
  struct in_addr a4;
  struct in6_addr a6;
  char buf[INET6_ADDRSTRLEN + 1];
  const char *pct;
  if (dotted_quad(s)) return 4;
  if (inet_aton(s, &a4) && strpbrk(s, " \t\n\v\f\r") == NULL) return 4;
  if (inet_pton(AF_INET6, s, &a6) == 1) return 6;
  pct = strchr(s, '%');
  if (pct != NULL && (size_t)(pct - s) < sizeof buf) {
    memcpy(buf, s, (size_t)(pct - s));
    buf[pct - s] = '\0';
    if (inet_pton(AF_INET6, buf, &a6) == 1) return 6;
  }
  return 0;
}

#else
typedef int cn_dns_answer_unused; /* (without c-ares: nothing here; C wants a declaration) */
#endif /* HAVE_CARES */
