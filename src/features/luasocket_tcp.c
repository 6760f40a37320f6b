/* luasocket_tcp: the one file that knows LuaSocket's private memory layout.
 *
 * For speed, the wrappers read lines from and write to LuaSocket's connected
 * TCP objects directly instead of calling their methods (see
 * doc/lua-layer.md, "the shortcuts"). That relies on the head of LuaSocket's
 * t_tcp struct (tcp.h, buffer.h, io.h of LuaSocket 3.0-rc1 and 3.1.0, the
 * versions in Debian 11-13, on 64- and 32-bit builds):
 *
 *   t_socket sock; t_io io {ctx, send, recv, error}; t_buffer buf
 *   {birthday, sent, received, io*, tm*, first, last, data[BUF_SIZE]}; t_timeout tm
 *
 * ls_tcp_head below has the same member types in the same order, so the
 * compiler lays it out as it lays out LuaSocket's on any ABI (armhf: 4-byte
 * pointers and size_t, the buffer's double 8-byte aligned). test/ls_layout_test
 * checks the probe and every field against the installed LuaSocket, natively
 * and on arm64 and armhf under qemu (scripts/cross-test.sh, doc/arm.md).
 *
 * An object is used directly only when it proves that layout (cn_ls_tcp): its
 * metatable is LuaSocket's "tcp{client}", its size covers the head and the
 * 8192-byte buffer, and the three pointers it holds into itself (io.ctx ->
 * sock, buf.io -> io, buf.tm -> the timeout after the buffer) are where the
 * layout puts them. Any other layout (another LuaSocket version, another
 * BUF_SIZE, another class) fails the probe, and the wrappers call the
 * object's methods instead, which is always correct, only slower.
 *
 * Off switches: ./configure --disable-fast-path (CN_NO_FAST_PATH) or
 * COSOCK_NO_FAST_PATH=1 in the environment when the module loads; CI runs
 * the whole suite once that way so the method path stays tested. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "luasocket_tcp.h"

#define LS_BUF_SIZE 8192
typedef struct ls_tcp_head {
  int sock;
  struct { void *ctx; void (*fn[3])(void); } io;
  struct { double birthday; size_t sent, received; void *io, *tm; size_t first, last; } buf;
} ls_tcp_head;
#define LS_DATA (offsetof(ls_tcp_head, buf.last) + sizeof(size_t))

void cn_ls_init(cn_loop *lp) {
  const char *env = getenv("COSOCK_NO_FAST_PATH");
  lp->ls.send_nres = 0;                        /* (learnt by the first send: cn_ls_learn_send) */
#ifdef CN_NO_FAST_PATH
  (void)env;
  lp->ls.off = 1;
#else
  lp->ls.off = env != NULL && *env != '\0' && strcmp(env, "0") != 0;
#endif
}

int cn_ls_enabled(const cn_loop *lp) { return !lp->ls.off; }

static void read_head(const char *tcp, ls_tcp_head *h) { memcpy(h, tcp, sizeof *h); }

/* The metatable named name in the registry, looked up once (*mt). */
static inline const void *class_mt(lua_State *L, const void **mt, const char *name) {
  if (*mt == NULL) {
    lua_getfield(L, LUA_REGISTRYINDEX, name);
    if (lua_istable(L, -1)) *mt = lua_topointer(L, -1);
    lua_pop(L, 1);
  }
  return *mt;
}

/* Whether mt is LuaSocket's tcp{master} or tcp{server} (the client's struct). */
static int other_class(lua_State *L, cn_loop *lp, const void *mt) {
  return mt == class_mt(L, &lp->ls.other_mt[0], "tcp{master}") ||
         mt == class_mt(L, &lp->ls.other_mt[1], "tcp{server}");
}

/* The object at inner when it is a LuaSocket TCP object laid out as checked:
 * of class tcp{client}, or with any_class also tcp{master} or tcp{server}
 * (the same struct). Inlined: the wrappers' receive and send run it. */
static inline char *probe(lua_State *L, cn_loop *lp, int inner, int any_class) {
  const void *mt;
  char *ud;
  ls_tcp_head h;
  if (lp->ls.off || (ud = lua_touserdata(L, inner)) == NULL || !lua_getmetatable(L, inner))
    return NULL;
  mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  if (mt != class_mt(L, &lp->ls.client_mt, "tcp{client}") &&
      (!any_class || !other_class(L, lp, mt)))
    return NULL;
  if (lua_rawlen(L, inner) < LS_DATA + LS_BUF_SIZE) return NULL;
  read_head(ud, &h);
  if (h.io.ctx != (void *)ud || h.buf.io != (void *)(ud + offsetof(ls_tcp_head, io)) ||
      h.buf.tm != (void *)(ud + LS_DATA + LS_BUF_SIZE))
    return NULL;
  /* LuaSocket never changes a client's class, and closing it only sets its
   * socket to -1: an object proven once stays one. */
  return ud;
}

char *cn_ls_tcp(lua_State *L, cn_loop *lp, int inner) { return probe(L, lp, inner, 0); }

int cn_ls_fd(lua_State *L, cn_loop *lp, int inner) {
  const char *tcp = probe(L, lp, inner, 1);
  ls_tcp_head h;
  if (tcp == NULL) return CN_FD_UNKNOWN;
  read_head(tcp, &h);
  return h.sock >= 0 ? h.sock : -1;
}

int cn_ls_buffered(const char *tcp) {
  ls_tcp_head h;
  read_head(tcp, &h);
  return h.buf.first < h.buf.last;
}

/* Stores the buffer's window and its count of bytes taken into the object. */
static void set_buffer(char *tcp, size_t first, size_t last, size_t received) {
  memcpy(tcp + offsetof(ls_tcp_head, buf.first), &first, sizeof first);
  memcpy(tcp + offsetof(ls_tcp_head, buf.last), &last, sizeof last);
  memcpy(tcp + offsetof(ls_tcp_head, buf.received), &received, sizeof received);
}

int cn_ls_peek_line(char *tcp, const char **line, size_t *len) {
  ls_tcp_head h;
  char *data = tcp + LS_DATA;
  const char *nl;
  size_t first, last;
  read_head(tcp, &h);
  if (h.sock < 0) return -1;
  first = h.buf.first;
  last = h.buf.last;
  if (last > LS_BUF_SIZE) return -1;           /* not a window of that array: not ours to read */
  if (first >= last) {
    ssize_t n;
    do n = recv(h.sock, data, LS_BUF_SIZE, 0); while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n == 0) return -2;                     /* the peer closed: LuaSocket's IO_CLOSED */
    if (n < 0) return -1;
    first = 0;
    last = (size_t)n;
    set_buffer(tcp, first, last, h.buf.received);
  }
  nl = memchr(data + first, '\n', last - first);
  if (nl == NULL) return -1;
  *line = data + first;
  *len = (size_t)(nl - (data + first));
  return 1;
}

void cn_ls_take(char *tcp, size_t n) {
  ls_tcp_head h;
  size_t first;
  read_head(tcp, &h);
  first = h.buf.first + n;
  if (first >= h.buf.last) set_buffer(tcp, 0, 0, h.buf.received + n);
  else set_buffer(tcp, first, h.buf.last, h.buf.received + n);
}

long cn_ls_send(char *tcp, const char *data, size_t len) {
  ls_tcp_head h;
  ssize_t n;
  read_head(tcp, &h);
  if (h.sock < 0) return -1;                   /* closed */
  do n = send(h.sock, data, len, 0); while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  if (n > 0) {                                 /* LuaSocket's count, as its send keeps it */
    h.buf.sent += (size_t)n;
    memcpy(tcp + offsetof(ls_tcp_head, buf.sent), &h.buf.sent, sizeof h.buf.sent);
  }
  return (long)n;
}
