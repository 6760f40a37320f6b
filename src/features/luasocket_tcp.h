/* luasocket_tcp: direct access to LuaSocket's connected TCP objects, for the
 * wrappers' fast paths (luasocket_tcp.c owns loop->ls). Everything that
 * depends on LuaSocket's private memory layout is in luasocket_tcp.c. */
#ifndef COSOCK_LUASOCKET_TCP_H
#define COSOCK_LUASOCKET_TCP_H

#include <stddef.h>

#include "compat.h"

#include "loop.h"

/* Reads the environment switch (COSOCK_NO_FAST_PATH) once, at load. */
void cn_ls_init(cn_loop *lp);
/* Whether the fast paths may run (built in and not switched off). */
int cn_ls_enabled(const cn_loop *lp);

/* The object at inner when it is one of LuaSocket's connected TCP objects
 * laid out as checked (a "tcp object" below), else NULL: the caller then
 * uses its methods. NULL always while the fast paths are off. */
char *cn_ls_tcp(lua_State *L, cn_loop *lp, int inner);

/* The loop's fd reader (cn_fd_reader, set by cn_wrapper_open): the socket
 * of a LuaSocket TCP object of any class (client, master, server), as its
 * getfd() gives it (-1 once closed), read from the struct; CN_FD_UNKNOWN for
 * anything else, and always while the fast paths are off. */
int cn_ls_fd(lua_State *L, cn_loop *lp, int inner);

/* Whether LuaSocket's input buffer of tcp holds data. */
int cn_ls_buffered(const char *tcp);

/* A whole line at the front of tcp's input buffer, refilling the buffer
 * with one recv() when it is empty: returns 1 with the line's start and
 * length (without the newline; CRs still in); the caller copies it, then
 * calls cn_ls_take(tcp, len + 1).
 * 0: the socket has nothing now (LuaSocket would say "timeout"). -2: the
 * buffer is empty and the peer closed (LuaSocket would say "closed", with
 * nothing read and its buffer as it was). -1: no whole line (a partial one,
 * an error): LuaSocket's receive must run; it meets the same state and
 * reports it in its own words. */
int cn_ls_peek_line(char *tcp, const char **line, size_t *len);
/* Takes n bytes off the front of the buffer, counting them as received. */
void cn_ls_take(char *tcp, size_t n);

/* How many values LuaSocket's send returns on success (3; a debug build of
 * LuaSocket: 4), learnt from the first send through its method on a TCP
 * object (cn_ls_learn_send); 0 until then. The fast send (cn_ls_send, which
 * gives three) runs only when it is 3. */
static inline int cn_ls_send_nres(const cn_loop *lp) { return lp->ls.send_nres; }
/* That send's method returned n > 0 values (asked while it is still 0). */
static inline void cn_ls_learn_send(cn_loop *lp, int n) { lp->ls.send_nres = n; }

/* Writes data to tcp's socket as LuaSocket's send would (counting the bytes
 * in its sent total): returns how many went (0 when the socket would block),
 * or -1 when LuaSocket's send must run (a closed object, an error). */
long cn_ls_send(char *tcp, const char *data, size_t len);

#endif
