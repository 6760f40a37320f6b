/* messages: the fixed words of cosock-native's errors and results, in one
 * place. Most are cosock 0.2.0's and LuaSocket's own (a program may match
 * them: they are its interface); Lua reads the same table as
 * cosock.core.messages (core.c), so that cosock.lua recognises what the loop
 * raises without typing the words again. And cn_argerror, luaL_argerror's
 * form of a "bad argument" error for a function whose name the call's debug
 * information would not give (see below); elsewhere luaL_argerror and the
 * luaL_check* family word it. */
#ifndef COSOCK_MESSAGES_H
#define COSOCK_MESSAGES_H

#include <stdarg.h>

#include "compat.h"

/* LuaSocket's: a wait that ended without its result; a socket closed. */
#define CN_MSG_TIMEOUT "timeout"
#define CN_MSG_CLOSED "closed"
/* cosock's, for an object the loop cannot wait on (the first line). */
#define CN_MSG_NON_WAKEABLE "non-wakeable socket"
/* cosock's, when an object's waker of a kind is set twice (its kind,
 * "recvr" or "sendr", comes first); a socket's says why. */
#define CN_MSG_WAKER_SET "waker already set"
#define CN_MSG_SOCKET_WAKER_SET CN_MSG_WAKER_SET ", sockets can only block one thread per waker kind"
/* cosock's, for setwaker with a kind the object does not wait for (the kind
 * follows: cn_wake_kind_error). */
#define CN_MSG_WAKE_KIND "unsupported wake kind: "
/* An allocation of the loop's failed (a function that names itself in its
 * errors says "<function>: out of memory" instead). */
#define CN_MSG_NO_MEMORY "cosock: out of memory"
/* cosock's first line when every task waits on what nothing can wake. */
#define CN_MSG_STALL "cosock tried to call socket.select with no sockets and no timeout. " \
  "this is a bug, please report it, including the above dump state"

/* The table above, as Lua sees it: name -> words. */
#define CN_MESSAGES(X) \
  X(timeout, CN_MSG_TIMEOUT) X(closed, CN_MSG_CLOSED) X(non_wakeable, CN_MSG_NON_WAKEABLE) \
  X(waker_set, CN_MSG_WAKER_SET) \
  X(socket_waker_set, CN_MSG_SOCKET_WAKER_SET) X(wake_kind, CN_MSG_WAKE_KIND) \
  X(no_memory, CN_MSG_NO_MEMORY) X(stall, CN_MSG_STALL)

/* Raises "bad argument #arg to 'fname' (<fmt with its values>)", with the
 * caller's position, as luaL_argerror words it (but naming fname, which a
 * method called through a table field or a lifted wait would not give). */
static inline int cn_argerror(lua_State *L, int arg, const char *fname, const char *fmt, ...) {
  va_list ap;
  luaL_checkstack(L, 4, NULL);
  luaL_where(L, 1);
  lua_pushfstring(L, "bad argument #%d to '%s' (", arg, fname);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_pushliteral(L, ")");
  lua_concat(L, 4);
  return lua_error(L);
}

/* Raises CN_MSG_WAKE_KIND with the kind at index arg as tostring gives it:
 * a setwaker's answer to a kind its object has no waker for. */
static inline int cn_wake_kind_error(lua_State *L, int arg) {
  return luaL_error(L, CN_MSG_WAKE_KIND "%s", luaL_tolstring(L, arg, NULL));
}

#endif
